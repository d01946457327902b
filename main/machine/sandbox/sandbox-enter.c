/*
 * sandbox-enter: runs one command inside a place's live sandbox (live-sandbox.ts), in one exec
 * where the fallback takes three (/bin/sh joining the control groups, nsenter, setpriv): on a
 * machine where each exec of a dynamically linked program costs milliseconds of page faults, that
 * is most of a sandboxed call's cost. Built statically by scripts/build-launcher.ts.
 *
 *   sandbox-enter [--cgroup-procs FILE]... [--ns TYPE:FD]... --root FD --wd FD -- PROGRAM ARG...
 *   sandbox-enter --version     (the server's check that it runs here)
 *
 * In this order, and failing closed at any step (a message on stderr, exit 126, nothing run):
 * joins each control group (its own pid written into FILE, opened without following any link),
 * enters the namespaces given as open descriptors (the user namespace first), changes root to the
 * descriptor --root and folder to --wd, forks (a new PID namespace applies to children only); the
 * child sets no-new-privs, drops the bounding set and every ambient, inheritable, permitted and
 * effective capability, closes every descriptor but 0-2, and execs PROGRAM. The parent waits and
 * exits as the child did. Both stay in the process group the server made, so stopping the command
 * signals them all; a stop signal sent to this process alone is passed on to the child.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAILED 126
#define MAX_ITEMS 16

static void fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("sandbox-enter: ", stderr);
  vfprintf(stderr, format, args);
  fputs("; nothing was run.\n", stderr);
  va_end(args);
  _exit(FAILED);
}

/* A descriptor number as given on the command line: digits only, at least 3 (0-2 are stdio). */
static int parse_fd(const char *text) {
  char *end;
  errno = 0;
  long fd = strtol(text, &end, 10);
  if (errno || end == text || *end || fd < 3 || fd > 1 << 20) fail("bad descriptor \"%s\"", text);
  return (int)fd;
}

static const struct {
  const char *name;
  int type;
} NAMESPACES[] = {
    {"user", CLONE_NEWUSER}, {"mnt", CLONE_NEWNS},  {"uts", CLONE_NEWUTS},       {"ipc", CLONE_NEWIPC},
    {"net", CLONE_NEWNET},   {"pid", CLONE_NEWPID}, {"cgroup", CLONE_NEWCGROUP},
};

struct ns {
  int type;
  int fd;
  const char *name;
};

static struct ns parse_ns(const char *text) {
  const char *colon = strchr(text, ':');
  if (colon)
    for (size_t i = 0; i < sizeof NAMESPACES / sizeof NAMESPACES[0]; i++)
      if (strlen(NAMESPACES[i].name) == (size_t)(colon - text) && !strncmp(text, NAMESPACES[i].name, colon - text))
        return (struct ns){NAMESPACES[i].type, parse_fd(colon + 1), NAMESPACES[i].name};
  fail("bad namespace \"%s\" (expected TYPE:FD)", text);
  return (struct ns){0};
}

/*
 * Opens a control group's cgroup.procs for writing, refusing any symbolic link on the way (the
 * server made these folders; a link there is not its own). Kernels before openat2 (5.6) refuse a
 * link in the last component only.
 */
static int open_procs(const char *path) {
  struct open_how how = {.flags = O_WRONLY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
  int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (fd < 0 && errno == ENOSYS) fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  return fd;
}

static void join_group(const char *path) {
  char pid[24];
  int length = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
  int fd = open_procs(path);
  if (fd < 0 || write(fd, pid, (size_t)length) != length)
    fail("the place's limits could not be applied (its control group %s: %s): run the command again", path, strerror(errno));
  close(fd);
}

/* Everything the child must not keep: run after the last step that needs a privilege. */
static void drop_privileges(void) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) fail("could not set no-new-privs: %s", strerror(errno));
  for (int cap = 0; cap < 64; cap++) {
    int present = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
    if (present < 0 && errno == EINVAL) break; /* past the kernel's last capability */
    if (present < 0) fail("could not read the bounding set: %s", strerror(errno));
    if (present && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)) fail("could not drop capability %d from the bounding set: %s", cap, strerror(errno));
  }
  /* EINVAL: a kernel without ambient capabilities (before 4.3), where there are none to clear. */
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
    fail("could not clear the ambient capabilities: %s", strerror(errno));
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &header, data)) fail("could not drop the capabilities: %s", strerror(errno));
}

static void close_all_but_stdio(void) {
  if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0) return;
  if (errno != ENOSYS) fail("could not close the inherited descriptors: %s", strerror(errno));
  /* Kernels before 5.9: every number up to the limit. */
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit)) fail("could not read the descriptor limit: %s", strerror(errno));
  for (rlim_t fd = 3; fd < limit.rlim_cur; fd++) close((int)fd);
}

static volatile sig_atomic_t child_pid;

/* A stop signal sent to this process alone reaches the command (a group's signal reaches it anyway). */
static void pass_on(int signal) {
  if (child_pid > 0) kill((pid_t)child_pid, signal);
}

static const int PASSED[] = {SIGTERM, SIGINT, SIGHUP};

int main(int argc, char **argv) {
  const char *groups[MAX_ITEMS];
  struct ns spaces[MAX_ITEMS];
  int group_count = 0, ns_count = 0, root = -1, wd = -1, i = 1;
  if (argc == 2 && !strcmp(argv[1], "--version")) {
    puts("sandbox-enter 1");
    return 0;
  }
  for (; i < argc; i++) {
    const char *option = argv[i];
    if (!strcmp(option, "--")) {
      i++;
      break;
    }
    if (i + 1 >= argc) fail("%s needs a value", option);
    const char *value = argv[++i];
    if (!strcmp(option, "--cgroup-procs") && group_count < MAX_ITEMS) {
      if (value[0] != '/') fail("the control group file %s is not an absolute path", value);
      groups[group_count++] = value;
    } else if (!strcmp(option, "--ns") && ns_count < MAX_ITEMS) {
      spaces[ns_count++] = parse_ns(value);
    } else if (!strcmp(option, "--root") && root < 0) {
      root = parse_fd(value);
    } else if (!strcmp(option, "--wd") && wd < 0) {
      wd = parse_fd(value);
    } else {
      fail("unknown or repeated option %s", option);
    }
  }
  if (i >= argc) fail("no program to run (give it after --)");
  if (root < 0 || wd < 0) fail("--root and --wd are required");

  /* Joined here, by path in the host's file system, before anything of the place runs. */
  for (int g = 0; g < group_count; g++) join_group(groups[g]);

  /* The user namespace first: it gives the rights to enter the others. */
  for (int pass = 0; pass < 2; pass++)
    for (int n = 0; n < ns_count; n++) {
      if ((spaces[n].type == CLONE_NEWUSER) != (pass == 0)) continue;
      if (setns(spaces[n].fd, spaces[n].type)) fail("could not enter the sandbox's %s namespace: %s", spaces[n].name, strerror(errno));
    }
  if (fchdir(root) || chroot(".")) fail("could not change root to the sandbox's: %s", strerror(errno));
  if (fchdir(wd)) fail("could not change to the place's folder: %s", strerror(errno));

  sigset_t stops, before;
  sigemptyset(&stops);
  for (size_t s = 0; s < sizeof PASSED / sizeof PASSED[0]; s++) sigaddset(&stops, PASSED[s]);
  /* Until the child's pid is known, a stop waits (a child forked meanwhile is in the group anyway). */
  sigprocmask(SIG_BLOCK, &stops, &before);
  pid_t pid = fork();
  if (pid < 0) fail("could not fork into the sandbox: %s", strerror(errno));
  if (pid == 0) {
    drop_privileges();
    close_all_but_stdio();
    sigprocmask(SIG_SETMASK, &before, NULL);
    execvp(argv[i], argv + i);
    fprintf(stderr, "sandbox-enter: could not start %s in the sandbox: %s\n", argv[i], strerror(errno));
    _exit(errno == ENOENT ? 127 : FAILED);
  }
  child_pid = pid;
  struct sigaction action = {.sa_handler = pass_on, .sa_flags = SA_RESTART};
  sigemptyset(&action.sa_mask);
  for (size_t s = 0; s < sizeof PASSED / sizeof PASSED[0]; s++) sigaction(PASSED[s], &action, NULL);
  sigprocmask(SIG_SETMASK, &before, NULL);

  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) fail("could not wait for the command: %s", strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  /* Ends as the command did, by the same signal, without a core file of its own. */
  int signal_number = WTERMSIG(status);
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  signal(signal_number, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal_number);
  sigprocmask(SIG_UNBLOCK, &only, NULL);
  raise(signal_number);
  return 128 + signal_number;
}
