# The ELF reading library, linked by both rbrecord and rbdecode: what the
# recorder and the decoder both need to know about ELF files.
noinst_LIBRARIES += %D%/librbelf.a
%C%_librbelf_a_SOURCES = %D%/elf_note.h %D%/elf_note.c
%C%_librbelf_a_CFLAGS = $(AM_CFLAGS) -fPIC
ELF_LIBS = %D%/librbelf.a
