/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A call whose return address is a global symbol: CP_CALL3 calls FN with up
 * to three integer arguments (rdi, rsi, rdx) from inline assembly followed
 * by the label LABEL, so tests find each call site's return address in the
 * workload's ELF symbol table instead of trusting our output. The stack is
 * realigned (and moved past the red zone the compiler may use, as it does
 * not know about the call) around it. Used from C and C++ workloads.
 */
#ifndef CP_WORKLOADS_CALL_SITE_H
#define CP_WORKLOADS_CALL_SITE_H

#define CP_CALL3(fn, label, a, b, c, ret)					\
	asm volatile("mov %%rsp, %%rbx\n\t"					\
		     "sub $128, %%rsp\n\t"					\
		     "and $-16, %%rsp\n\t"					\
		     "call " fn "@PLT\n"					\
		     ".globl " label "\n"					\
		     label ":\n\t"						\
		     "mov %%rbx, %%rsp\n\t"					\
		     : "=a"(ret)						\
		     : "D"(a), "S"(b), "d"(c)					\
		     : "rbx", "rcx", "r8", "r9", "r10", "r11", "memory", "cc")

#endif /* CP_WORKLOADS_CALL_SITE_H */
