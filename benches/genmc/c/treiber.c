/* A Treiber stack with the orderings of `Treiber` in ../src/main.rs: N threads each push their
 * number and pop once, then main pops the stack empty. -DBUGGY: the push stores the top
 * instead of a compare-exchange. Nodes are never freed, as in the Rust version. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#ifndef N
#define N 2
#endif

struct node {
	int item;
	struct node *next;
};

_Atomic(struct node *) top;
int popped[N + 1];

void push(int v)
{
	struct node *n = malloc(sizeof(*n));
	n->item = v;
	for (;;) {
		struct node *t = atomic_load_explicit(&top, memory_order_acquire);
		n->next = t;
#ifdef BUGGY
		atomic_store_explicit(&top, n, memory_order_release);
		return;
#else
		if (atomic_compare_exchange_strong_explicit(&top, &t, n, memory_order_acq_rel,
							    memory_order_acquire))
			return;
#endif
	}
}

int pop(void)
{
	for (;;) {
		struct node *t = atomic_load_explicit(&top, memory_order_acquire);
		if (!t)
			return 0;
		struct node *next = t->next;
		if (atomic_compare_exchange_strong_explicit(&top, &t, next, memory_order_acq_rel,
							    memory_order_acquire))
			return t->item;
	}
}

void *thread(void *arg)
{
	int i = (intptr_t)arg;
	push(i + 1);
	popped[i] = pop();
	return NULL;
}

int main(void)
{
	pthread_t t[N];
	for (int i = 0; i < N; i++)
		pthread_create(&t[i], NULL, thread, (void *)(intptr_t)i);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	popped[N] = pop();
	/* Linearizable runs: each thread's pop finds a value (its own push came first), every
	 * value is popped once, and the stack ends empty. */
	int seen = 0;
	for (int i = 0; i < N; i++) {
		assert(popped[i] != 0);
		assert(!(seen & (1 << popped[i])));
		seen |= 1 << popped[i];
	}
	assert(popped[N] == 0);
	return 0;
}
