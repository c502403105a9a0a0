static inline int tri(int x) { return x * 3 + (x >> 2); }
int helper(int x) { int r = 0; for (int i = 0; i < x; i++) r ^= tri(i + x); return r; }
int twice(int x) { return tri(x) + tri(x + 1); }
