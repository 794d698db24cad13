# Intel PT with the kernel traced (--vmlinux, --kcore, perf.data folders)
# and every place an object's code is found.
if BUILD_DECODER
TESTS += tests/pt_kernel.test
endif
EXTRA_DIST += tests/pt_kernel.test
