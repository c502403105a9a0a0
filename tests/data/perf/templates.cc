// The C++ program tests/cli/perfdata.bats records with perf: templates in nested
// namespaces (main -> outer::inner::Box<double>::sum, main -> outer::inner::churn<long>);
// a fixed amount of work, no timing.
#include <cstdio>
#include <map>
#include <vector>
namespace outer {
namespace inner {
template <typename T> struct Box {
	std::vector<T> v;
	__attribute__((noinline)) T sum(int rounds) const
	{
		T s{};
		for (int r = 0; r < rounds; r++)
			for (auto &x : v)
				s += x * (r + 1);
		return s;
	}
};
template <typename K> __attribute__((noinline)) K churn(std::map<K, K> &m, int n)
{
	K t{};
	for (int i = 0; i < n; i++) {
		m[(K)(i % 1000)] += (K)i;
		t += m[(K)(i % 777)];
	}
	return t;
}
} // namespace inner
} // namespace outer

int main()
{
	outer::inner::Box<double> b;
	for (int i = 0; i < 100000; i++)
		b.v.push_back(i);
	std::map<long, long> m;
	double s = b.sum(1500);
	long t = outer::inner::churn<long>(m, 6000000);
	std::printf("%f %ld\n", s, t);
	return 0;
}
