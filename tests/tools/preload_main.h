/*
 * preload_main.h - for the fault-injection shims (fail_alloc.c, fail_io.c):
 * wraps glibc's program entry so that the shim counts calls from main() on
 * (the dynamic loader's and the C++ runtime's start-up are not the
 * program's), and at exit appends the count of calls it saw to the file
 * named by the shim's LOG variable (PRELOAD_LOG_ENV), so that a loop knows
 * when N has passed the last call. Include once, after defining `static int
 * armed` and `static long calls` (and PRELOAD_AT_MAIN, a function to run
 * just before main, if the shim has one).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*main_fn)(int, char **, char **);
static main_fn real_main;

static int counted_main(int argc, char **argv, char **envp)
{
#ifdef PRELOAD_AT_MAIN
	PRELOAD_AT_MAIN();              /* the shim's own set-up, before the program runs */
#endif
	__atomic_store_n(&armed, 1, __ATOMIC_RELAXED);
	return real_main(argc, argv, envp);
}

/* glibc's entry calls this with the program's main: count from there on */
int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
		      void (*rtld_fini)(void), void *stack_end)
{
	int (*real)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *) =
		(int (*)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *))
		dlsym(RTLD_NEXT, "__libc_start_main");
	real_main = main;
	return real(counted_main, argc, argv, init, fini, rtld_fini, stack_end);
}

__attribute__((destructor)) static void report(void)
{
	const char *log = getenv(PRELOAD_LOG_ENV);
	if (!log)
		return;
	__atomic_store_n(&armed, 0, __ATOMIC_RELAXED);   /* our own write is not the program's */
	int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return;
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%ld\n", calls);
	if (write(fd, buf, (size_t)len) < 0)
		calls = 0;
	close(fd);
}
