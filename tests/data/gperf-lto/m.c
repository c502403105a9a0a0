#include <stdio.h>
int work(int n);
int helper(int x);
int main(int argc, char **argv) { (void)argv; printf("%d %d\n", work(argc * 1000), helper(argc)); return 0; }
