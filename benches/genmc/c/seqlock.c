/* Boehm's seqlock with Relaxed atomic data and its two fences, as `Seqlock` in ../src/main.rs:
 * one writer writes 1, one reader reads until it has a consistent pair. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

atomic_int seq, d0, d1;

void *writer(void *arg)
{
	int s = atomic_load_explicit(&seq, memory_order_relaxed);
	atomic_store_explicit(&seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&d0, 1, memory_order_relaxed);
	atomic_store_explicit(&d1, 1, memory_order_relaxed);
	atomic_store_explicit(&seq, s + 2, memory_order_release);
	return NULL;
}

void *reader(void *arg)
{
	int a, b;
	for (;;) {
		int s1 = atomic_load_explicit(&seq, memory_order_acquire);
		if (s1 % 2 == 0) {
			a = atomic_load_explicit(&d0, memory_order_relaxed);
			b = atomic_load_explicit(&d1, memory_order_relaxed);
			atomic_thread_fence(memory_order_acquire);
			if (atomic_load_explicit(&seq, memory_order_relaxed) == s1)
				break;
		}
	}
	assert(a == b);
	return NULL;
}

int main(void)
{
	pthread_t w, r;
	pthread_create(&w, NULL, writer, NULL);
	pthread_create(&r, NULL, reader, NULL);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	return 0;
}
