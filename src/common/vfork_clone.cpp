#include "vfork_clone.hpp"

#include <cerrno>
#include <csignal>
#include <cstdint>

#include <linux/sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace batchai {
namespace {

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
constexpr bool kSupported = true;

// clone3(args); the child, on args->stack, calls fn(arg) and exits with what it returns. Written
// in assembly because the child has no C frame to return into on its new stack.
long clone3_calling(clone_args* args, int (*fn)(void*), void* arg) {
  long ret = SYS_clone3;
  register long fn_reg asm("r12") = reinterpret_cast<long>(fn);   // callee-saved: the child keeps them
  register long arg_reg asm("r13") = reinterpret_cast<long>(arg);
  asm volatile(
      "syscall\n\t"
      "test %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      "xor %%ebp, %%ebp\n\t"
      "and $-16, %%rsp\n\t"
      "mov %%r13, %%rdi\n\t"
      "call *%%r12\n\t"
      "mov %%eax, %%edi\n\t"
      "mov $231, %%eax\n\t"  // exit_group
      "syscall\n\t"
      "hlt\n\t"
      "1:\n\t"
      : "+a"(ret)
      : "D"(args), "S"(sizeof(clone_args)), "r"(fn_reg), "r"(arg_reg)
      : "rcx", "r11", "memory", "cc");
  return ret;
}
#else
constexpr bool kSupported = false;
long clone3_calling(clone_args*, int (*)(void*), void*) { return -ENOSYS; }
#endif

constexpr std::size_t kChildStack = 64 * 1024;

}  // namespace

pid_t vfork_clone(int (*child)(void*), void* arg, int group_fd) {
  if (!kSupported) {
    errno = ENOSYS;
    return -1;
  }
  void* stack = ::mmap(nullptr, kChildStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return -1;
  clone_args args{};
  args.flags = CLONE_VM | CLONE_VFORK | (group_fd >= 0 ? CLONE_INTO_CGROUP : 0);
  args.exit_signal = SIGCHLD;
  args.stack = reinterpret_cast<std::uint64_t>(stack);
  args.stack_size = kChildStack;
  if (group_fd >= 0) args.cgroup = static_cast<std::uint64_t>(group_fd);
  // No handler of ours may run in the child while it shares our memory.
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const long ret = clone3_calling(&args, child, arg);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::munmap(stack, kChildStack);  // the child has exec'd or exited: its stack is ours again
  if (ret < 0) {
    errno = static_cast<int>(-ret);
    return -1;
  }
  return static_cast<pid_t>(ret);
}

void reset_signal_handlers() {
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction sa {};
    if (::sigaction(sig, nullptr, &sa) != 0) continue;
    if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) continue;
    sa.sa_handler = SIG_DFL;
    sa.sa_flags = 0;
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace batchai
