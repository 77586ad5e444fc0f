/* A single-producer single-consumer ring of two slots, as `Ring` in ../src/main.rs: -DRA
 * publishes the indices Release and reads them Acquire (correct), else Relaxed. The producer
 * pushes 1 and 2, the consumer pops twice. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#ifdef RA
#define PUBLISH memory_order_release
#define OBSERVE memory_order_acquire
#else
#define PUBLISH memory_order_relaxed
#define OBSERVE memory_order_relaxed
#endif

int slots[2];
atomic_int head, tail;

bool push(int v)
{
	int t = atomic_load_explicit(&tail, memory_order_relaxed);
	if (t - atomic_load_explicit(&head, OBSERVE) == 2)
		return false;
	slots[t % 2] = v;
	atomic_store_explicit(&tail, t + 1, PUBLISH);
	return true;
}

bool pop(int *v)
{
	int h = atomic_load_explicit(&head, memory_order_relaxed);
	if (atomic_load_explicit(&tail, OBSERVE) == h)
		return false;
	*v = slots[h % 2];
	atomic_store_explicit(&head, h + 1, PUBLISH);
	return true;
}

void *producer(void *arg)
{
	push(1);
	push(2);
	return NULL;
}

void *consumer(void *arg)
{
	int a = 0, b = 0;
	bool got_a = pop(&a);
	bool got_b = pop(&b);
	/* First in, first out. */
	if (got_a)
		assert(a == 1);
	if (got_b)
		assert(b == (got_a ? 2 : 1));
	return NULL;
}

int main(void)
{
	pthread_t p, c;
	pthread_create(&p, NULL, producer, NULL);
	pthread_create(&c, NULL, consumer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	return 0;
}
