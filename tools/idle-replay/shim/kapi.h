/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel API that cpuidle governors use, for user space.
 *
 * Every header under include/ pulls in this file, so a governor source
 * compiles against exactly this list.  Anything missing here is missing on
 * purpose: the build fails and names it, and the fix is to add it here, not
 * to work around it in the lab.
 *
 * The time-related calls are answered by the replay engine for the CPU it is
 * simulating (see src/engine.c); the per-CPU variables are plain arrays
 * indexed by the CPU number.
 */
#ifndef REPLAY_SHIM_KAPI_H
#define REPLAY_SHIM_KAPI_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Basic types. */
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
typedef s64 ktime_t;

#define U8_MAX		((u8)~0U)
#define U32_MAX		((u32)~0U)
#define U64_MAX		((u64)~0ULL)
#define S64_MAX		((s64)(U64_MAX >> 1))
#define KTIME_MAX	S64_MAX

#define NSEC_PER_USEC	1000L
#define NSEC_PER_MSEC	1000000L
#define USEC_PER_SEC	1000000L
#define NSEC_PER_SEC	1000000000L

/*
 * The tick period depends on HZ, which a scenario chooses at run time, so
 * TICK_NSEC is a variable here.  It keeps the kernel's type (long).
 */
extern long replay_tick_nsec;
#define TICK_NSEC	(replay_tick_nsec)

/* Compiler and annotation helpers. */
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define __init
#define __exit
#define __cpuidle
#define __read_mostly
#define BIT(n)		(1UL << (n))
#define EXPORT_SYMBOL(sym)
#define EXPORT_SYMBOL_GPL(sym)
#define READ_ONCE(x)	(x)
#define WRITE_ONCE(x, v)	((x) = (v))

/* Kconfig-style test: IS_ENABLED(CONFIG_FOO) is 1 only if it is defined to 1. */
#define __replay_one_if_1	0,
#define __replay_second(a, b, ...)	b
#define __replay_probe(junk)	__replay_second(junk 1, 0, 0)
#define __replay_expand(x)	__replay_probe(__replay_one_if_##x)
#define IS_ENABLED(option)	__replay_expand(option)

/* Type-checked min/max, as in the kernel (each argument evaluated once). */
#define __replay_cmp(x, y, op) ({		\
	__typeof__(x) __x = (x);		\
	__typeof__(y) __y = (y);		\
	(void)(&__x == &__y);			\
	__x op __y ? __x : __y; })
#define min(x, y)	__replay_cmp(x, y, <)
#define max(x, y)	__replay_cmp(x, y, >)
#define min_t(type, x, y)	__replay_cmp((type)(x), (type)(y), <)
#define max_t(type, x, y)	__replay_cmp((type)(x), (type)(y), >)

/* 64-bit division helpers. */
static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

/* do_div(n, base): n becomes n / base, the value is the remainder. */
#define do_div(n, base) ({				\
	u32 __base = (base);				\
	u32 __rem = (u32)((u64)(n) % __base);		\
	(n) = (u64)(n) / __base;			\
	__rem; })

static inline s64 ktime_to_ns(ktime_t kt)
{
	return kt;
}

static inline s64 ktime_to_us(ktime_t kt)
{
	return kt / NSEC_PER_USEC;
}

static inline ktime_t ktime_sub(ktime_t a, ktime_t b)
{
	return a - b;
}

static inline ktime_t ns_to_ktime(u64 ns)
{
	return (ktime_t)ns;
}

/* Per-CPU variables: one slot per simulated CPU. */
#define REPLAY_NR_CPUS	16
#define NR_CPUS		REPLAY_NR_CPUS
#define DEFINE_PER_CPU(type, name)	__typeof__(type) name[REPLAY_NR_CPUS]
#define per_cpu_ptr(ptr, cpu)	(&(*(ptr))[(cpu)])
#define per_cpu(var, cpu)	((var)[(cpu)])
#define this_cpu_ptr(ptr)	per_cpu_ptr(ptr, replay_current_cpu())
#define smp_processor_id()	replay_current_cpu()

/* cpuidle data structures: the fields governors use, with kernel types. */
#define CPUIDLE_STATE_MAX	10
#define CPUIDLE_NAME_LEN	16
#define CPUIDLE_DESC_LEN	32

#define CPUIDLE_FLAG_NONE		0
#define CPUIDLE_FLAG_POLLING		BIT(0)
#define CPUIDLE_FLAG_COUPLED		BIT(1)
#define CPUIDLE_FLAG_TIMER_STOP		BIT(2)
#define CPUIDLE_FLAG_UNUSABLE		BIT(3)
#define CPUIDLE_FLAG_OFF		BIT(4)
#define CPUIDLE_FLAG_TLB_FLUSHED	BIT(5)
#define CPUIDLE_FLAG_RCU_IDLE		BIT(6)

struct cpuidle_device;
struct cpuidle_driver;

struct cpuidle_state_usage {
	unsigned long long disable;
	unsigned long long usage;
	u64 time_ns;
	unsigned long long above;
	unsigned long long below;
	unsigned long long rejected;
};

struct cpuidle_state {
	char name[CPUIDLE_NAME_LEN];
	char desc[CPUIDLE_DESC_LEN];
	s64 exit_latency_ns;
	s64 target_residency_ns;
	unsigned int flags;
	unsigned int exit_latency;
	int power_usage;
	unsigned int target_residency;
	int (*enter)(struct cpuidle_device *dev, struct cpuidle_driver *drv,
		     int index);
};

struct cpuidle_device {
	unsigned int registered:1;
	unsigned int enabled:1;
	unsigned int poll_time_limit:1;
	unsigned int cpu;
	ktime_t next_hrtimer;
	int last_state_idx;
	u64 last_residency_ns;
	u64 poll_limit_ns;
	u64 forced_idle_latency_limit_ns;
	struct cpuidle_state_usage states_usage[CPUIDLE_STATE_MAX];
};

struct cpuidle_driver {
	const char *name;
	struct cpuidle_state states[CPUIDLE_STATE_MAX];
	int state_count;
	int safe_state_index;
};

struct cpuidle_governor {
	char name[CPUIDLE_NAME_LEN];
	unsigned int rating;
	int (*enable)(struct cpuidle_driver *drv, struct cpuidle_device *dev);
	void (*disable)(struct cpuidle_driver *drv, struct cpuidle_device *dev);
	int (*select)(struct cpuidle_driver *drv, struct cpuidle_device *dev,
		      bool *stop_tick);
	void (*reflect)(struct cpuidle_device *dev, int index);
};

/* Answered by the replay engine for the CPU being simulated. */
unsigned int replay_current_cpu(void);
u64 local_clock(void);
ktime_t tick_nohz_get_sleep_length(ktime_t *delta_next);
bool tick_nohz_tick_stopped(void);
bool tick_nohz_idle_got_tick(void);
s64 cpuidle_governor_latency_req(unsigned int cpu);

/* Records the governor under the label of the file being compiled. */
int replay_register_governor(struct cpuidle_governor *gov, const char *label);

#ifndef REPLAY_GOV_LABEL
#define REPLAY_GOV_LABEL "unlabelled"
#endif

#define cpuidle_register_governor(gov) \
	replay_register_governor(gov, REPLAY_GOV_LABEL)

/* Governors register from an initcall; here it runs before main(). */
#define postcore_initcall(fn)						\
	static void __attribute__((constructor)) __replay_init_##fn(void) \
	{								\
		(void)fn();						\
	}

/*
 * Trace events.  An event header's TRACE_EVENT() gives a trace_<name>()
 * that fills the event's entry with the header's own TP_fast_assign() code
 * and passes it to replay_hook_<name>(), which the shim's
 * trace/define_trace.h defines once the header has declared its events.
 * The header is read once.  With REPLAY_TRACE_OFF every trace_<name>() is
 * an empty inline function that the compiler drops with its call, as if
 * the governor had no trace calls.
 */
#define TP_PROTO(args...)		args
#define TP_ARGS(args...)		args
#define TP_STRUCT__entry(args...)	args
#define TP_fast_assign(args...)		args
#define __field(type, item)		type item;
#define TRACE_DEFINE_ENUM(a)		_Static_assert((a) >= 0, #a)

/* The word __print_symbolic() would print for @v, for the shim's hooks. */
struct trace_print_flags {
	unsigned long mask;
	const char *name;
};

static inline const char *replay_print_symbolic(unsigned long v,
						const struct trace_print_flags *s)
{
	for (; s->name; s++)
		if (s->mask == v)
			return s->name;
	return "?";
}

#define __print_symbolic(value, symbols...)				\
	replay_print_symbolic(value,					\
		(const struct trace_print_flags[]){ symbols, { 0, NULL } })
#ifdef REPLAY_TRACE_OFF
#define TRACE_EVENT(name, proto, args, tstruct, assign, print)		\
	static inline void trace_##name(proto)				\
	{								\
	}
#else
#define TRACE_EVENT(name, proto, args, tstruct, assign, print)		\
	struct replay_entry_##name { tstruct };				\
	static inline void						\
	replay_hook_##name(const struct replay_entry_##name *__entry);	\
	static inline void trace_##name(proto)				\
	{								\
		struct replay_entry_##name __replay_entry;		\
		struct replay_entry_##name *__entry = &__replay_entry;	\
									\
		assign;							\
		replay_hook_##name(__entry);				\
	}
#endif

/*
 * What a traced governor's events tell the engine (src/engine.c): the last
 * selection event and the last update event of the current select() call.
 */
void replay_event_select(int candidate, int state, const char *reason,
			 s64 sleep_length_ns, bool stop_tick);
void replay_event_update(int state, const char *kind, int bin);

/* KUnit hooks are no-ops: the lab always builds without CONFIG_KUNIT. */
#define KUNIT_STATIC_STUB_REDIRECT(real_fn_name, args...) do { } while (0)
#define VISIBLE_IF_KUNIT static
#define EXPORT_SYMBOL_IF_KUNIT(symbol)

#endif /* REPLAY_SHIM_KAPI_H */
