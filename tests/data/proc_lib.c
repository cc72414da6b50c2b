// SPDX-License-Identifier: GPL-2.0
/*
 * A library the proc unit tests have proc_target dlopen(): its file is
 * libproc_lib.so.1.0 and its DT_SONAME libproc_lib.so.1, so that the two
 * ways of naming it as MOD differ.
 */
int proc_lib_counter;

__attribute__((noinline)) int proc_lib_fn(int x)
{
	return x * 3 + proc_lib_counter++;
}
