// SPDX-License-Identifier: GPL-2.0
/*
 * cpuidle-emu: an emulated idle platform for testing cpuidle governors.
 *
 * Registers a cpuidle driver whose idle state table is copied from a real
 * platform (or given on the command line), so that a governor can be run
 * against that table on a machine that has no idle driver of its own, such
 * as a QEMU TCG guest.  State 0 may be the generic polling state; every
 * other state halts the CPU until the next interrupt and then busy-waits for
 * the state's exit latency, so that choosing a state that is too deep costs
 * real wakeup latency, as it does on hardware.  Nothing here saves power.
 *
 * See README for what is and is not emulated.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpuidle.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/instrumentation.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>

/* Longest exit latency the busy-wait will emulate, in microseconds. */
#define EMU_MAX_LATENCY_US	100000U

/**
 * struct emu_state - one idle state of a platform profile
 * @name: state name as the platform's driver reports it
 * @latency_us: exit latency in microseconds
 * @residency_us: target residency in microseconds
 */
struct emu_state {
	const char *name;
	unsigned int latency_us;
	unsigned int residency_us;
};

/**
 * struct emu_profile - an idle state table of a real platform
 * @name: value of the "profile" parameter that selects this table
 * @poll: state 0 is the polling state (the table lists the states after it)
 * @states: the non-polling states, shallowest first, ended by an entry
 *	without a name
 */
struct emu_profile {
	const char *name;
	bool poll;
	const struct emu_state *states;
};

/* Tables as the platforms' own idle drivers expose them (us). */
static const struct emu_state emu_i5_10600k[] = {
	{ "C1", 1, 1 }, { "C2", 120, 360 }, { "C3", 1034, 3102 },
	{ }
};

static const struct emu_state emu_rk3399[] = {
	{ "WFI", 1, 1 }, { "cpu-sleep", 370, 900 },
	{ "cluster-sleep", 900, 2000 },
	{ }
};

static const struct emu_state emu_power10[] = {
	{ "CEDE", 12, 120 },
	{ }
};

static const struct emu_state emu_granite_rapids[] = {
	{ "C1", 1, 1 }, { "C1E", 4, 4 }, { "C6", 170, 650 },
	{ "C6P", 210, 1000 },
	{ }
};

static const struct emu_state emu_sapphire_rapids[] = {
	{ "C1", 1, 1 }, { "C1E", 2, 4 }, { "C6", 290, 800 },
	{ }
};

static const struct emu_state emu_alder_lake[] = {
	{ "C1", 1, 1 }, { "C1E", 2, 4 }, { "C6", 220, 600 },
	{ "C8", 280, 800 }, { "C10", 680, 2000 },
	{ }
};

static const struct emu_state emu_skylake[] = {
	{ "C1", 2, 2 }, { "C1E", 10, 20 }, { "C3", 70, 100 },
	{ "C6", 85, 200 }, { "C7s", 124, 800 }, { "C8", 200, 800 },
	{ "C9", 480, 5000 }, { "C10", 890, 5000 },
	{ }
};

static const struct emu_state emu_zen[] = {
	{ "C1", 1, 2 }, { "C2", 18, 36 }, { "C3", 350, 700 },
	{ }
};

static const struct emu_state emu_gs101[] = {
	{ "WFI", 1, 1 }, { "cpu-off", 230, 2000 },
	{ "cluster-off", 340, 2500 }, { "system", 455, 3500 },
	{ }
};

static const struct emu_state emu_mt8196[] = {
	{ "WFI", 1, 1 }, { "cpuoff", 349, 6710 },
	{ "clusteroff", 434, 6710 }, { "s2idle", 20000, 4294967295U },
	{ }
};

static const struct emu_profile emu_profiles[] = {
	{ "i5-10600K", true, emu_i5_10600k },
	{ "rk3399", false, emu_rk3399 },
	{ "power10", true, emu_power10 },
	{ "granite-rapids", true, emu_granite_rapids },
	{ "sapphire-rapids", true, emu_sapphire_rapids },
	{ "alder-lake", true, emu_alder_lake },
	{ "skylake", true, emu_skylake },
	{ "zen", true, emu_zen },
	{ "gs101", false, emu_gs101 },
	{ "mt8196", false, emu_mt8196 },
};

static char *profile = "i5-10600K";
module_param(profile, charp, 0444);
MODULE_PARM_DESC(profile,
		 "platform whose idle states to emulate (default i5-10600K; see README for the list)");

static char *states;
module_param(states, charp, 0444);
MODULE_PARM_DESC(states,
		 "custom table instead of a profile: [poll,]LAT/RES[,LAT/RES...] in us, shallowest first");

static bool emulate_latency = true;
module_param(emulate_latency, bool, 0444);
MODULE_PARM_DESC(emulate_latency,
		 "busy-wait for each state's exit latency after the halt (default Y)");

/*
 * The CPUs the driver is registered for: the present ones when the module
 * loads.  Registering for possible CPUs fails where possible outnumbers
 * present (no CPU device to attach the sysfs files to).  Offline CPUs keep
 * their device, so CPU hotplug needs no callback; a CPU added later (a
 * physical hot-add) gets no emulated states until the module is reloaded.
 */
static struct cpumask emu_cpus;
static DEFINE_PER_CPU(struct cpuidle_device, emu_devices);

static struct cpuidle_driver emu_driver = {
	.name = "cpuidle_emu",
	.cpumask = &emu_cpus,
};

/**
 * emu_exit_wait - busy-wait for an emulated exit latency
 * @us: latency in microseconds
 *
 * udelay() is only meant for short waits, so long latencies are paid in
 * one-millisecond pieces.
 */
static void emu_exit_wait(unsigned int us)
{
	unsigned int piece;

	while (us) {
		piece = min(us, 1000U);
		udelay(piece);
		us -= piece;
	}
}

/**
 * emu_enter_halt - enter an emulated halting idle state
 * @dev: cpuidle device of this CPU
 * @drv: the emulated driver
 * @index: index of the state to enter
 *
 * Called with interrupts off from the noinstr idle path.  The state carries
 * CPUIDLE_FLAG_RCU_IDLE, so this function tells RCU about the idle period
 * itself and keeps it short: only the halt runs with RCU not watching, and
 * the exit latency is paid afterwards with RCU watching.
 *
 * ct_cpuidle_enter() traces the interrupt enable (instrumentable code) and
 * then ends the instrumentable region; ct_cpuidle_exit() opens it again.
 * So the region is opened on entry, before ct_cpuidle_enter(), and closed
 * after the busy-wait (udelay() is instrumentable too), as acpi_idle does.
 *
 * Return: @index, the state that was entered.
 */
static __cpuidle int emu_enter_halt(struct cpuidle_device *dev,
				    struct cpuidle_driver *drv, int index)
{
	instrumentation_begin();
	ct_cpuidle_enter();
	raw_safe_halt();
	raw_local_irq_disable();
	ct_cpuidle_exit();

	if (emulate_latency)
		emu_exit_wait(drv->states[index].exit_latency);
	instrumentation_end();

	return index;
}

/**
 * emu_add_state - append a halting state to the driver's table
 * @name: state name, or NULL to number it
 * @latency_us: exit latency in microseconds
 * @residency_us: target residency in microseconds
 *
 * Return: 0 on success, -EINVAL if the state does not fit or is out of
 * order.
 */
static int emu_add_state(const char *name, unsigned int latency_us,
			 unsigned int residency_us)
{
	int i = emu_driver.state_count;
	struct cpuidle_state *s;

	if (i >= CPUIDLE_STATE_MAX) {
		pr_err("more than %d idle states\n", CPUIDLE_STATE_MAX);
		return -EINVAL;
	}
	if (latency_us > EMU_MAX_LATENCY_US) {
		pr_err("exit latency %u us of state %d is above %u us\n",
		       latency_us, i, EMU_MAX_LATENCY_US);
		return -EINVAL;
	}
	if (i && residency_us < emu_driver.states[i - 1].target_residency) {
		pr_err("state %d: residency %u us is below the previous state's\n",
		       i, residency_us);
		return -EINVAL;
	}

	s = &emu_driver.states[i];
	if (name)
		strscpy(s->name, name, sizeof(s->name));
	else
		snprintf(s->name, sizeof(s->name), "S%d", i);
	snprintf(s->desc, sizeof(s->desc), "halt + %u us busy-wait",
		 latency_us);
	s->exit_latency = latency_us;
	s->target_residency = residency_us;
	s->flags = CPUIDLE_FLAG_RCU_IDLE;
	s->enter = emu_enter_halt;
	emu_driver.state_count++;

	return 0;
}

/**
 * emu_add_poll - make state 0 the generic polling state
 */
static void emu_add_poll(void)
{
	cpuidle_poll_state_init(&emu_driver);
	emu_driver.state_count = 1;
}

/**
 * emu_parse_states - build the table from the "states" parameter
 * @list: the parameter, e.g. "poll,1/1,120/360"
 *
 * Return: 0 on success or a negative error code.
 */
static int emu_parse_states(const char *list)
{
	char *copy, *cur, *item, *res;
	unsigned int lat, tres;
	int ret = 0;

	copy = kstrdup(list, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;

	cur = copy;
	while ((item = strsep(&cur, ",")) != NULL) {
		if (!strcmp(item, "poll") && !emu_driver.state_count) {
			emu_add_poll();
			continue;
		}
		res = strchr(item, '/');
		if (!res) {
			ret = -EINVAL;
			break;
		}
		*res++ = '\0';
		if (kstrtouint(item, 10, &lat) || kstrtouint(res, 10, &tres)) {
			ret = -EINVAL;
			break;
		}
		ret = emu_add_state(NULL, lat, tres);
		if (ret)
			break;
	}
	kfree(copy);

	if (ret)
		pr_err("bad states=\"%s\": want [poll,]LAT/RES[,LAT/RES...] in us, residency not decreasing\n",
		       list);
	return ret;
}

/**
 * emu_load_profile - build the table from a named platform profile
 * @name: profile name (case does not matter)
 *
 * Return: 0 on success or -EINVAL for an unknown name.
 */
static int emu_load_profile(const char *name)
{
	const struct emu_profile *p = NULL;
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(emu_profiles); i++) {
		if (!strcasecmp(name, emu_profiles[i].name)) {
			p = &emu_profiles[i];
			break;
		}
	}
	if (!p) {
		pr_err("unknown profile \"%s\"\n", name);
		return -EINVAL;
	}

	if (p->poll)
		emu_add_poll();
	for (i = 0; p->states[i].name; i++) {
		ret = emu_add_state(p->states[i].name, p->states[i].latency_us,
				    p->states[i].residency_us);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * emu_explain_driver_error - say why cpuidle refused the driver
 * @err: the error cpuidle_register_driver() returned
 */
static void emu_explain_driver_error(int err)
{
	struct cpuidle_driver *other;

	switch (err) {
	case -EBUSY:
		other = cpuidle_get_driver();
		pr_err("another idle driver (%s) is registered; boot with idle=halt so that no other driver claims the CPUs\n",
		       other ? other->name : "unknown");
		break;
	case -ENODEV:
		pr_err("cpuidle is disabled in this kernel (cpuidle.off=1 on the command line?)\n");
		break;
	default:
		pr_err("cpuidle_register_driver() failed: %pe\n", ERR_PTR(err));
		break;
	}
}

/**
 * emu_unregister - unregister the devices and the driver
 *
 * Safe on a partial registration: devices that were never registered are
 * skipped by cpuidle_unregister_device().
 */
static void emu_unregister(void)
{
	unsigned int cpu;

	for_each_cpu(cpu, &emu_cpus)
		cpuidle_unregister_device(per_cpu_ptr(&emu_devices, cpu));
	cpuidle_unregister_driver(&emu_driver);
}

/**
 * emu_register - register the driver and one device per present CPU
 *
 * Return: 0 on success or a negative error code, after saying which step
 * failed.
 */
static int emu_register(void)
{
	struct cpuidle_device *dev;
	unsigned int cpu;
	int ret;

	cpumask_copy(&emu_cpus, cpu_present_mask);
	ret = cpuidle_register_driver(&emu_driver);
	if (ret) {
		emu_explain_driver_error(ret);
		return ret;
	}

	for_each_cpu(cpu, &emu_cpus) {
		dev = per_cpu_ptr(&emu_devices, cpu);
		dev->cpu = cpu;
		ret = cpuidle_register_device(dev);
		if (ret) {
			pr_err("cannot register the idle device of CPU %u: %pe\n",
			       cpu, ERR_PTR(ret));
			emu_unregister();
			return ret;
		}
	}
	return 0;
}

static int __init emu_init(void)
{
	int ret;

	if (states && *states)
		ret = emu_parse_states(states);
	else
		ret = emu_load_profile(profile);
	if (ret)
		return ret;
	if (emu_driver.state_count < 1) {
		pr_err("no idle states\n");
		return -EINVAL;
	}

	ret = emu_register();
	if (ret)
		return ret;

	pr_info("%d idle states (%s) on %u CPUs\n", emu_driver.state_count,
		states && *states ? "custom" : profile,
		cpumask_weight(&emu_cpus));
	return 0;
}
module_init(emu_init);

static void __exit emu_exit(void)
{
	emu_unregister();
	pr_info("unregistered\n");
}
module_exit(emu_exit);

MODULE_DESCRIPTION("Emulated idle states of real platforms for cpuidle governor testing");
MODULE_LICENSE("GPL");
