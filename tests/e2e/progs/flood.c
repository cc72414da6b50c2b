// SPDX-License-Identifier: GPL-2.0
/*
 * Another local user against dprobe's control channel (agent-flood): until
 * the file argv[1] exists, read /proc/net/unix over and over and, for
 * every socket whose name says dprobe, open as many connections as it
 * takes (non-blocking, kept open, 4096 at most, the oldest closed first)
 * so that its listener's queue stays full.  Prints "flood: ready".
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_CONNS 4096

static int conns[MAX_CONNS];
static unsigned next;

static void keep(int fd)
{
	if (conns[next % MAX_CONNS] > 0)
		close(conns[next % MAX_CONNS]);
	conns[next++ % MAX_CONNS] = fd;
}

/* Connect to @path ("@name": abstract) until its queue is full. */
static void flood(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	socklen_t sl;

	if (len >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	for (int i = 0; i < 64; i++) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);

		if (fd < 0)
			return;
		if (connect(fd, (struct sockaddr *)&sa, sl) && errno != EINPROGRESS) {
			close(fd);
			return;
		}
		keep(fd);
	}
}

static void scan(void)
{
	FILE *f = fopen("/proc/net/unix", "r");
	char line[512];

	while (f && fgets(line, sizeof(line), f)) {
		char *path = strrchr(line, ' ');

		if (!path || !strstr(path, "dprobe"))
			continue;
		path[strcspn(path, "\n")] = '\0';
		flood(path + 1);
	}
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	printf("flood: ready\n");
	fflush(stdout);
	while (access(argv[1], F_OK)) {
		scan();
		usleep(200);
	}
	return 0;
}
