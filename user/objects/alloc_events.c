// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>

#include "objects/alloc_events.h"

const char *cp_obj_event_kind_name(unsigned int kind)
{
	switch (kind) {
	case CP_OBJ_EV_ALLOC:
		return "alloc";
	case CP_OBJ_EV_FREE:
		return "free";
	case CP_OBJ_EV_REALLOC:
		return "realloc";
	case CP_OBJ_EV_MAP:
		return "map";
	case CP_OBJ_EV_UNMAP:
		return "unmap";
	case CP_OBJ_EV_REMAP:
		return "remap";
	default:
		return "?";
	}
}

bool cp_alloc_event_site(const struct cp_object_event *ev, __u64 *caller, __s64 *stack_id)
{
	bool heap = ev->kind == CP_OBJ_EV_ALLOC || ev->kind == CP_OBJ_EV_REALLOC;
	bool fresh = ev->kind == CP_OBJ_EV_ALLOC || ev->kind == CP_OBJ_EV_MAP;

	/* what cp_alloc_event_apply() refuses names no site either */
	if (!ev->tgid || !(heap || ev->kind == CP_OBJ_EV_MAP || ev->kind == CP_OBJ_EV_REMAP) ||
	    (heap && (ev->flags & CP_OBJ_EV_F_CHUNK)) || (fresh && !ev->addr))
		return false;
	*caller = ev->caller;
	*stack_id = ev->stack_id >= 0 ? ev->stack_id : CP_NO_STACK;
	return true;
}

static void to_object(struct cp_objects *o, const struct cp_object_event *ev, struct cp_object *obj)
{
	bool heap = ev->kind == CP_OBJ_EV_ALLOC || ev->kind == CP_OBJ_EV_REALLOC;
	bool chunk = heap && (ev->flags & CP_OBJ_EV_F_CHUNK);
	__s64 stack_id;
	__u64 caller;

	memset(obj, 0, sizeof(*obj));
	obj->start = ev->addr;
	obj->size = ev->size;
	/* an object from the chunk headers has no call site: none is interned */
	if (cp_alloc_event_site(ev, &caller, &stack_id))
		obj->callsite = cp_objects__callsite(o, ev->tgid, caller, stack_id);
	obj->alloc_ns = ev->time_ns;
	obj->tid = chunk ? 0 : ev->tid;
	obj->kind = heap ? CP_OBJ_HEAP : CP_OBJ_MAPPING;
	obj->flags = ev->kind == CP_OBJ_EV_REALLOC ? CP_OBJ_F_REALLOC : chunk ? CP_OBJ_F_CHUNK : 0;
}

int cp_alloc_event_apply(struct cp_objects *o, const void *data, size_t size)
{
	struct cp_object_event ev;
	struct cp_object obj;

	if (size < sizeof(ev))
		return -EINVAL;
	memcpy(&ev, data, sizeof(ev));
	if (ev.type != CP_REC_OBJECT || !ev.tgid)
		return -EINVAL;
	switch (ev.kind) {
	case CP_OBJ_EV_ALLOC:
	case CP_OBJ_EV_MAP:
		if (!ev.addr)
			return -EINVAL;
		to_object(o, &ev, &obj);
		return cp_objects__on_alloc(o, ev.tgid, &obj);
	case CP_OBJ_EV_FREE:
	case CP_OBJ_EV_UNMAP:
		return cp_objects__on_free(o, ev.tgid, ev.addr);
	case CP_OBJ_EV_REALLOC:
	case CP_OBJ_EV_REMAP:
		to_object(o, &ev, &obj);
		return cp_objects__on_realloc(o, ev.tgid, ev.old_addr, &obj);
	default:
		return -EINVAL;
	}
}
