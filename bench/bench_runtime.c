/* bench_runtime.c: placeholder of the contract of issue 16. */
#include <stdio.h>
int
main(void)
{
	return 0;
}
