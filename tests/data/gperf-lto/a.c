int helper(int x);
int twice(int x);
static inline int sq(int x) { return x * x; }
int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += helper(i) + sq(twice(i)); return s; }
