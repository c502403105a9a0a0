// The C++ seed: namespaces, a template, inlining.
namespace ns {
template <typename T> static inline __attribute__((always_inline)) T sq(T x) { return x * x; }
struct W { __attribute__((noinline)) static int work(int x) { return sq(x) + 1; } };
}
extern "C" void _start() { volatile int s = 0; for (;;) s += ns::W::work(s); }
