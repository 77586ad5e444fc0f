/* Peterson's lock around a plain counter, as fixtures/rust/src/peterson.rs: -DSC for SeqCst
 * flags and turn (correct), else Release stores and Acquire loads; the unlock is Release. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef SC
#define STORE memory_order_seq_cst
#define LOAD memory_order_seq_cst
#else
#define STORE memory_order_release
#define LOAD memory_order_acquire
#endif

atomic_bool flag[2];
atomic_int turn;
int count;

void *thread(void *arg)
{
	int me = (intptr_t)arg, other = 1 - me;
	atomic_store_explicit(&flag[me], true, STORE);
	atomic_store_explicit(&turn, other, STORE);
	while (atomic_load_explicit(&flag[other], LOAD) &&
	       atomic_load_explicit(&turn, LOAD) == other)
		;
	count++;
	atomic_store_explicit(&flag[me], false, memory_order_release);
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, thread, (void *)(intptr_t)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert(count == 2);
	return 0;
}
