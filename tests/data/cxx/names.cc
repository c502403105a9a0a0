// A C++ program for gperf2tach's naming test: namespaces, templates, overloads, a lambda
// through std::function, a function always inlined into its caller, and an exported alias.
#include <functional>
#include <string>
#include <cstdio>
namespace outer { namespace inner {
template <typename T> struct Accum { T v{}; __attribute__((noinline)) void add(T x) { v += x; } };
__attribute__((noinline)) int hot(int x) { return x * 3; }
__attribute__((noinline)) double hot(double x) { return x * 2; }
inline __attribute__((always_inline)) int hot_inline_user(int x) { return hot(x) + 1; }
__attribute__((noinline)) int caller(int x) { return hot_inline_user(x); }
}}
__attribute__((noinline)) int run(std::function<int(int)> f, int x) { return f(x); }
// A C function exported under an alias, as glibc's __libc_start_main_impl is
// __libc_start_main: DWARF names the one, the symbol table exports the other.
extern "C" {
static __attribute__((noinline, used)) int impl_fn(int x) { return x ^ 5; }
int pub_fn(int) __attribute__((alias("impl_fn")));
}
int main(int argc, char **) {
	outer::inner::Accum<double> a; outer::inner::Accum<long> b;
	a.add(argc); b.add(argc);
	auto lam = [](int y) { return y + 7; };
	std::printf("%d %f %d %f %ld\n", run(lam, argc), outer::inner::hot(2.0), outer::inner::caller(argc), a.v, b.v);
	std::printf("%d\n", pub_fn(argc));
	return 0;
}
