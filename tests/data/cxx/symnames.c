/* Functions named in the symbol table only (built without -g): Rust legacy and v0
 * mangled names, and one function with a local name, a hidden __GI_ alias and a global
 * alias at the same address, as glibc names __libc_start_main. */
#define NOINLINE __attribute__((noinline, used))

NOINLINE int rust_legacy(int x) __asm__("_ZN4core3fmt5write17h0123456789abcdefE");
NOINLINE int rust_legacy(int x) { return x * 3 + 1; }
NOINLINE int rust_v0(int x) __asm__("_RNvNtCs1234_7mycrate3foo3bar");
NOINLINE int rust_v0(int x) { return x * 5 + 2; }

NOINLINE static int start_main_impl(int x) { return x * 7 + 3; }
extern int start_main(int x) __attribute__((alias("start_main_impl")));
extern int __GI_start_main(int x) __attribute__((alias("start_main_impl"), visibility("hidden")));

int main(int argc, char **argv)
{
	(void)argv;
	return rust_legacy(argc) + rust_v0(argc) + start_main(argc) + __GI_start_main(argc);
}
