# `make install` and `make uninstall`, as a Debian tool installs (included
# by the Makefile):
#
#   make install [PREFIX=/usr/local] [DESTDIR=]
#
#   $(PREFIX)/bin/dprobe
#   $(PREFIX)/lib/dprobe/libdprobe.so        where the installed dprobe
#                                            looks (../lib/dprobe/ from
#                                            its bin/, so the layout under
#                                            PREFIX is fixed)
#   $(PREFIX)/include/dprobe/*.h             kprobes.h, tracepoint.h
#   $(PREFIX)/lib/pkgconfig/dprobe.pc        Cflags/Libs for them
#   $(PREFIX)/share/man/man1/dprobe*.1       made from `dprobe help`
#   $(PREFIX)/share/bash-completion/completions/dprobe
#   $(PREFIX)/share/doc/dprobe/              README.md and docs/
#
# DESTDIR is prepended to every path written (a staging tree, as Debian's
# packaging uses); nothing installed depends on it: the .pc file and the
# manual pages name PREFIX alone, and dprobe finds its library relative
# to itself.  `make install-test` checks all of it (tests/install/run.sh).

PREFIX   ?= /usr/local
DESTDIR  ?=
BINDIR      := $(PREFIX)/bin
AGENTDIR    := $(PREFIX)/lib/dprobe
INCDIR      := $(PREFIX)/include/dprobe
PCDIR       := $(PREFIX)/lib/pkgconfig
MAN1DIR     := $(PREFIX)/share/man/man1
COMPDIR     := $(PREFIX)/share/bash-completion/completions
DOCDIR      := $(PREFIX)/share/doc/dprobe

DP_SUMMARY  := kprobe-based event tracing for user-space processes
DP_VERSION   = $(shell sed -n 's/.*DPROBE_VERSION "\(.*\)"/\1/p' src/cli/main.c)

# One page per command of src/cli/main.c: mk/man-from-help.sh fails (and
# so the build) when this list and the binary's commands differ.
MAN_CMDS  := check format list trace stat record report latency count top flamegraph show mount cleanup help
MAN_PAGES := dprobe.1 $(MAN_CMDS:%=dprobe-%.1)
HEADERS   := $(wildcard include/dprobe/*.h)
DOCS      := README.md $(wildcard docs/*.md)

# PREFIX as last built with: the pages and the .pc file name it, so they
# are made again when it changes.
$(O)/.prefix: FORCE
	@mkdir -p $(O)
	@echo '$(PREFIX)' | cmp -s - $@ || echo '$(PREFIX)' > $@

$(O)/man/.stamp: $(O)/dprobe mk/man-from-help.sh mk/install.mk $(O)/.prefix
	@rm -rf $(O)/man
	sh mk/man-from-help.sh $(O)/dprobe $(O)/man '$(DOCDIR)' '$(MAN_CMDS)'
	@touch $@

$(O)/dprobe.pc: mk/dprobe.pc.in src/cli/main.c mk/install.mk $(O)/.prefix
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(DP_VERSION)|' \
	    -e 's|@SUMMARY@|$(DP_SUMMARY)|' $< > $@.tmp && mv $@.tmp $@

# Built with everything else, so a command without a page fails `make`.
all: $(O)/man/.stamp $(O)/dprobe.pc

.PHONY: install uninstall install-test FORCE
FORCE:

install: all
	install -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(AGENTDIR)' \
	  '$(DESTDIR)$(INCDIR)' '$(DESTDIR)$(PCDIR)' '$(DESTDIR)$(MAN1DIR)' \
	  '$(DESTDIR)$(COMPDIR)' '$(DESTDIR)$(DOCDIR)'
	install -m 0755 $(O)/dprobe '$(DESTDIR)$(BINDIR)/dprobe'
	install -m 0644 $(AGENT_SO) '$(DESTDIR)$(AGENTDIR)/libdprobe.so'
	install -m 0644 $(HEADERS) '$(DESTDIR)$(INCDIR)/'
	install -m 0644 $(O)/dprobe.pc '$(DESTDIR)$(PCDIR)/dprobe.pc'
	install -m 0644 $(MAN_PAGES:%=$(O)/man/%) '$(DESTDIR)$(MAN1DIR)/'
	install -m 0644 share/bash-completion/dprobe '$(DESTDIR)$(COMPDIR)/dprobe'
	install -m 0644 $(DOCS) '$(DESTDIR)$(DOCDIR)/'

# Every file install wrote, then the directories that are dprobe's alone.
uninstall:
	rm -f '$(DESTDIR)$(BINDIR)/dprobe' '$(DESTDIR)$(AGENTDIR)/libdprobe.so' \
	  $(patsubst %,'$(DESTDIR)$(INCDIR)/%',$(notdir $(HEADERS))) \
	  '$(DESTDIR)$(PCDIR)/dprobe.pc' \
	  $(patsubst %,'$(DESTDIR)$(MAN1DIR)/%',$(MAN_PAGES)) \
	  '$(DESTDIR)$(COMPDIR)/dprobe' \
	  $(patsubst %,'$(DESTDIR)$(DOCDIR)/%',$(notdir $(DOCS)))
	-rmdir '$(DESTDIR)$(AGENTDIR)' '$(DESTDIR)$(INCDIR)' '$(DESTDIR)$(DOCDIR)' \
	  2>/dev/null

install-test: all $(EXAMPLE)
	@sh tests/install/run.sh $(O)
