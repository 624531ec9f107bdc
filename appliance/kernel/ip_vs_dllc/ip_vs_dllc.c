// SPDX-License-Identifier: GPL-2.0
/*
 * IPVS: Dynamic Least Load and Connection scheduling module (dllc)
 *
 * The next connection goes to the destination i with the smallest
 *
 *	C_i × Lr_i / W_i,	Lr_i = L_i / avg(L) × 100
 *
 * where C_i is the destination's connection overhead as weighted least
 * connection counts it (ip_vs_dest_conn_overhead(): active connections
 * weigh 256 times more than the others), L_i its load as measured on the
 * server and written into /proc/net/ip_vs_dllc, and W_i its weight. The
 * study's relative load Lr_i divides every L_i by the same average and
 * multiplies it by the same 100: a factor common to every destination, which
 * cannot change which product is smallest. It cancels, and the rule becomes
 * the smallest C_i × L_i / W_i.
 *
 * Loads are integers in milli-loads (1000: one fully busy server) and count
 * clamped into [100, 1000000], so that idle servers compare as equals and a
 * product is never 0 for a server with connections. A load never written,
 * or older than max_age_ms, counts as the rounded mean of the service's
 * fresh loads: a server whose agent stopped answering is neither favoured nor
 * starved. With no fresh load at all every destination counts 1000 and the
 * rule is weighted least connection.
 *
 * No floating point and no division on the hot path. With key_i = C_i × L_i
 * (C_i < 2^32, L_i <= 10^6 < 2^20, so key_i < 2^52 fits in a u64),
 *
 *	key_a / W_a < key_b / W_b  <=>  key_a × W_b < key_b × W_a	(W > 0)
 *
 * and both sides, below 2^84, are compared exactly as 96-bit numbers made of
 * two 64-bit halves (dllc_core.h; the same on every architecture, no u128).
 * Equal products go to the smaller L_i / W_i, compared the same way, then to
 * the first destination in the service's list. Destinations with a weight of
 * 0 or less, or IP_VS_DEST_F_OVERLOAD, take no new connections.
 *
 * agents/internal/dllc (Pick, Fill) is the reference of the same choice in
 * user space; test/dllc_core_test.c runs its cases against dllc_core.h.
 */

#define pr_fmt(fmt) "IPVS: dllc: " fmt

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/capability.h>
#include <linux/ctype.h>
#include <linux/hash.h>
#include <linux/inet.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <linux/proc_fs.h>
#include <linux/rculist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/ip_vs.h>

#include "dllc_core.h"

#ifndef DLLC_VERSION
#error "DLLC_VERSION comes from dkms.conf, through Kbuild"
#endif

#define DLLC_PROC_NAME	"ip_vs_dllc"
#define DLLC_HASH_BITS	6
/* "sctp [v6]:port [v6]:port 4294967295\n" is 112 characters */
#define DLLC_LINE_MAX	128

static unsigned int max_age_ms = 3000;

/*
 * The load of one destination of a service, from add_dest (or init_service)
 * to del_dest (or done_service). The hot path finds it in the service's hash
 * under RCU and reads @load and @fresh; everything else, and every change,
 * is under dllc_mutex.
 */
struct dllc_dest {
	struct hlist_node	hnode;	/* in dllc_service.hash, by @dest */
	struct list_head	node;	/* in dllc_service.dests */
	struct ip_vs_dest	*dest;
	u32			load;	/* as written, milli-loads */
	bool			written;
	bool			fresh;	/* written at most max_age_ms ago */
	u64			stamp;	/* jiffies64 of the last write */
	struct rcu_head		rcu_head;
};

/* svc->sched_data: one per service scheduled by dllc, in every netns. */
struct dllc_service {
	struct list_head	node;	/* in dllc_services */
	struct ip_vs_service	*svc;
	struct list_head	dests;
	struct hlist_head	hash[1 << DLLC_HASH_BITS];
	u32			average;	/* load of a destination without a fresh one */
	struct delayed_work	expire;		/* next load going stale */
	struct rcu_head		rcu_head;
};

/* The services, their loads and averages; never taken on the hot path. */
static DEFINE_MUTEX(dllc_mutex);
static LIST_HEAD(dllc_services);

static struct hlist_head *dllc_bucket(struct dllc_service *st,
				      const struct ip_vs_dest *dest)
{
	return &st->hash[hash_ptr(dest, DLLC_HASH_BITS)];
}

/* Under rcu_read_lock() or dllc_mutex. */
static struct dllc_dest *dllc_lookup(struct dllc_service *st,
				     const struct ip_vs_dest *dest)
{
	struct dllc_dest *d;

	hlist_for_each_entry_rcu(d, dllc_bucket(st, dest), hnode,
				 lockdep_is_held(&dllc_mutex))
		if (d->dest == dest)
			return d;
	return NULL;
}

/* The load the choice uses for @d (NULL: no entry, as never written). */
static u32 dllc_effective(const struct dllc_dest *d, u32 average)
{
	if (d && READ_ONCE(d->fresh))
		return dllc_clamp(READ_ONCE(d->load));
	return average;
}

/*
 * dllc_refresh - marks the loads older than max_age_ms stale, recomputes the
 * average of the fresh ones and arms the work for the next one to go stale.
 * Under dllc_mutex.
 */
static void dllc_refresh(struct dllc_service *st)
{
	u64 now = get_jiffies_64();
	u64 max_age = msecs_to_jiffies(READ_ONCE(max_age_ms));
	u64 sum = 0, next = 0;
	struct dllc_dest *d;
	u32 n = 0;

	lockdep_assert_held(&dllc_mutex);
	list_for_each_entry(d, &st->dests, node) {
		bool fresh = d->written && !time_after64(now, d->stamp + max_age);

		WRITE_ONCE(d->fresh, fresh);
		if (!fresh)
			continue;
		sum += dllc_clamp(d->load);
		if (!n++ || time_before64(d->stamp + max_age, next))
			next = d->stamp + max_age;
	}
	WRITE_ONCE(st->average, dllc_mean(sum, n));
	if (n)
		mod_delayed_work(system_wq, &st->expire,
				 (unsigned long)(next + 1 - now));
	else
		cancel_delayed_work(&st->expire);
}

static void dllc_expire(struct work_struct *work)
{
	struct dllc_service *st = container_of(to_delayed_work(work),
					       struct dllc_service, expire);

	mutex_lock(&dllc_mutex);
	dllc_refresh(st);
	mutex_unlock(&dllc_mutex);
}

static int dllc_set_max_age(const char *val, const struct kernel_param *kp)
{
	struct dllc_service *st;
	int err = param_set_uint(val, kp);

	if (err)
		return err;
	mutex_lock(&dllc_mutex);
	list_for_each_entry(st, &dllc_services, node)
		dllc_refresh(st);
	mutex_unlock(&dllc_mutex);
	return 0;
}

static const struct kernel_param_ops dllc_max_age_ops = {
	.set = dllc_set_max_age,
	.get = param_get_uint,
};

module_param_cb(max_age_ms, &dllc_max_age_ops, &max_age_ms, 0644);
MODULE_PARM_DESC(max_age_ms,
		 "a load older than this (ms) counts as the service's average (default 3000)");

/* Under dllc_mutex. */
static int dllc_add(struct dllc_service *st, struct ip_vs_dest *dest)
{
	struct dllc_dest *d;

	if (dllc_lookup(st, dest))
		return 0;
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	d->dest = dest;
	list_add_tail(&d->node, &st->dests);
	hlist_add_head_rcu(&d->hnode, dllc_bucket(st, dest));
	return 0;
}

static void dllc_free(struct dllc_service *st)
{
	struct dllc_dest *d, *tmp;

	/* In-flight schedule() calls may still walk them: free after RCU. */
	list_for_each_entry_safe(d, tmp, &st->dests, node)
		kfree_rcu(d, rcu_head);
	kfree_rcu(st, rcu_head);
}

/*
 * init_service, done_service, add_dest and del_dest run in process context
 * under IPVS's configuration mutex (__ip_vs_mutex): they may sleep.
 */
static int dllc_init_svc(struct ip_vs_service *svc)
{
	struct dllc_service *st;
	struct ip_vs_dest *dest;
	int err;

	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	st->svc = svc;
	INIT_LIST_HEAD(&st->dests);
	st->average = DLLC_FULL_LOAD;
	INIT_DELAYED_WORK(&st->expire, dllc_expire);
	mutex_lock(&dllc_mutex);
	/* The scheduler may be switched onto a service with destinations. */
	list_for_each_entry(dest, &svc->destinations, n_list) {
		err = dllc_add(st, dest);
		if (err) {
			mutex_unlock(&dllc_mutex);
			dllc_free(st);
			return err;
		}
	}
	list_add_tail(&st->node, &dllc_services);
	mutex_unlock(&dllc_mutex);
	/* Published to schedule() by ip_vs_bind_scheduler()'s rcu_assign_pointer. */
	svc->sched_data = st;
	return 0;
}

static void dllc_done_svc(struct ip_vs_service *svc)
{
	struct dllc_service *st = svc->sched_data;

	mutex_lock(&dllc_mutex);
	list_del(&st->node);
	mutex_unlock(&dllc_mutex);
	/* Unreachable now: nothing can queue the work again. */
	cancel_delayed_work_sync(&st->expire);
	dllc_free(st);
}

static int dllc_add_dest(struct ip_vs_service *svc, struct ip_vs_dest *dest)
{
	struct dllc_service *st = svc->sched_data;
	int err;

	mutex_lock(&dllc_mutex);
	err = dllc_add(st, dest);
	mutex_unlock(&dllc_mutex);
	/* IPVS ignores the result: without an entry the load is the average. */
	if (err)
		pr_warn_ratelimited("no memory for a destination's load\n");
	return err;
}

static int dllc_del_dest(struct ip_vs_service *svc, struct ip_vs_dest *dest)
{
	struct dllc_service *st = svc->sched_data;
	struct dllc_dest *d;

	mutex_lock(&dllc_mutex);
	d = dllc_lookup(st, dest);
	if (d) {
		hlist_del_rcu(&d->hnode);
		list_del(&d->node);
		kfree_rcu(d, rcu_head);
		/* Its load no longer counts in the average. */
		dllc_refresh(st);
	}
	mutex_unlock(&dllc_mutex);
	return 0;
}

/* Called under rcu_read_lock(), in softirq or process context. */
static struct ip_vs_dest *dllc_schedule(struct ip_vs_service *svc,
					const struct sk_buff *skb,
					struct ip_vs_iphdr *iph)
{
	struct dllc_service *st = svc->sched_data;
	struct ip_vs_dest *dest, *best = NULL;
	struct dllc_cand cand, best_cand = {};
	u32 average = READ_ONCE(st->average);
	int weight;

	list_for_each_entry_rcu(dest, &svc->destinations, n_list) {
		weight = atomic_read(&dest->weight);
		if (weight <= 0 || (dest->flags & IP_VS_DEST_F_OVERLOAD))
			continue;
		cand.conns = max(ip_vs_dest_conn_overhead(dest), 0);
		cand.load = dllc_effective(dllc_lookup(st, dest), average);
		cand.weight = weight;
		if (!best || dllc_better(&cand, &best_cand)) {
			best = dest;
			best_cand = cand;
		}
	}
	if (!best) {
		ip_vs_scheduler_err(svc, "no destination available");
		return NULL;
	}

	IP_VS_DBG_BUF(6, "DLLC: server %s:%u overhead %llu load %u weight %u\n",
		      IP_VS_DBG_ADDR(best->af, &best->addr), ntohs(best->port),
		      best_cand.conns, best_cand.load, best_cand.weight);
	return best;
}

/* One line written to /proc/net/ip_vs_dllc. */
struct dllc_request {
	u16			protocol;	/* 0 for a firewall mark */
	u32			fwmark;
	int			vaf;
	union nf_inet_addr	vaddr;
	__be16			vport;
	int			daf;
	union nf_inet_addr	daddr;
	__be16			dport;
	u32			load;
};

static bool dllc_is_decimal(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit(*s))
			return false;
	return true;
}

/* "a.b.c.d:port" or "[v6]:port"; the string is modified. */
static int dllc_parse_addr_port(char *s, int *af, union nf_inet_addr *addr,
				__be16 *port)
{
	const char *end;
	char *sep;
	u16 p;

	memset(addr, 0, sizeof(*addr));
	if (*s == '[') {
		sep = strchr(s, ']');
		if (!sep || sep[1] != ':' ||
		    !in6_pton(s + 1, sep - s - 1, addr->in6.s6_addr, -1, &end) ||
		    end != sep)
			return -EINVAL;
		*af = AF_INET6;
		sep++;
	} else {
		sep = strrchr(s, ':');
		if (!sep || !in4_pton(s, sep - s, (u8 *)&addr->ip, -1, &end) ||
		    end != sep)
			return -EINVAL;
		*af = AF_INET;
	}
	if (!dllc_is_decimal(sep + 1) || kstrtou16(sep + 1, 10, &p))
		return -EINVAL;
	*port = htons(p);
	return 0;
}

/*
 * dllc_parse - "<tcp|udp|sctp> <vaddr>:<vport> <daddr>:<dport> <load>" or
 * "fwm <mark> <daddr>:<dport> <load>", one line, the newline optional.
 */
static int dllc_parse(char *buf, size_t size, struct dllc_request *req)
{
	char *tok[4], *p = buf;
	int n = 0;

	if (size > DLLC_LINE_MAX || strlen(buf) != size)
		return -EINVAL;
	if (size && buf[size - 1] == '\n')
		buf[--size] = '\0';
	if (strpbrk(buf, "\n\r"))
		return -EINVAL;
	while (p) {
		char *t = strsep(&p, " \t");

		if (!*t)
			continue;
		if (n == ARRAY_SIZE(tok))
			return -EINVAL;
		tok[n++] = t;
	}
	if (n != ARRAY_SIZE(tok))
		return -EINVAL;

	memset(req, 0, sizeof(*req));
	if (!strcmp(tok[0], "tcp"))
		req->protocol = IPPROTO_TCP;
	else if (!strcmp(tok[0], "udp"))
		req->protocol = IPPROTO_UDP;
	else if (!strcmp(tok[0], "sctp"))
		req->protocol = IPPROTO_SCTP;
	else if (strcmp(tok[0], "fwm"))
		return -EINVAL;

	if (!req->protocol) {
		if (!dllc_is_decimal(tok[1]) ||
		    kstrtou32(tok[1], 10, &req->fwmark) || !req->fwmark)
			return -EINVAL;
	} else if (dllc_parse_addr_port(tok[1], &req->vaf, &req->vaddr,
					&req->vport)) {
		return -EINVAL;
	}
	if (dllc_parse_addr_port(tok[2], &req->daf, &req->daddr, &req->dport))
		return -EINVAL;
	if (!dllc_is_decimal(tok[3]) || kstrtou32(tok[3], 10, &req->load))
		return -EINVAL;
	/* A firewall-mark service has the address family of its destinations. */
	if (!req->protocol)
		req->vaf = req->daf;
	return 0;
}

static bool dllc_svc_match(const struct ip_vs_service *svc, struct net *net,
			   const struct dllc_request *req)
{
	if (!net_eq(svc->ipvs->net, net) || svc->af != req->vaf)
		return false;
	if (!req->protocol)
		return svc->fwmark == req->fwmark;
	return !svc->fwmark && svc->protocol == req->protocol &&
	       svc->port == req->vport &&
	       ip_vs_addr_equal(svc->af, &svc->addr, &req->vaddr);
}

static int dllc_proc_write(struct file *file, char *buf, size_t size)
{
	struct net *net = seq_file_single_net(file->private_data);
	struct dllc_request req;
	struct dllc_service *st;
	struct dllc_dest *d;
	int err;

	if (!file_ns_capable(file, net->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	err = dllc_parse(buf, size, &req);
	if (err)
		return err;

	err = -ENOENT;
	mutex_lock(&dllc_mutex);
	list_for_each_entry(st, &dllc_services, node) {
		if (!dllc_svc_match(st->svc, net, &req))
			continue;
		list_for_each_entry(d, &st->dests, node) {
			if (d->dest->af != req.daf || d->dest->port != req.dport ||
			    !ip_vs_addr_equal(req.daf, &d->dest->addr, &req.daddr))
				continue;
			WRITE_ONCE(d->load, req.load);
			d->stamp = get_jiffies_64();
			d->written = true;
			dllc_refresh(st);
			err = 0;
			break;
		}
		break;
	}
	mutex_unlock(&dllc_mutex);
	return err;
}

static void dllc_show_addr(struct seq_file *m, int af,
			   const union nf_inet_addr *addr, __be16 port)
{
#ifdef CONFIG_IP_VS_IPV6
	if (af == AF_INET6) {
		seq_printf(m, "[%pI6c]:%u", &addr->in6, ntohs(port));
		return;
	}
#endif
	seq_printf(m, "%pI4:%u", &addr->ip, ntohs(port));
}

static void dllc_show_service(struct seq_file *m, struct dllc_service *st,
			      u64 now)
{
	struct ip_vs_service *svc = st->svc;
	struct ip_vs_dest *dest;
	struct dllc_dest *d;
	const char *proto;

	rcu_read_lock();
	list_for_each_entry_rcu(dest, &svc->destinations, n_list) {
		if (svc->fwmark) {
			seq_printf(m, "fwm %u ", svc->fwmark);
		} else {
			proto = svc->protocol == IPPROTO_TCP ? "tcp" :
				svc->protocol == IPPROTO_UDP ? "udp" : "sctp";
			seq_printf(m, "%s ", proto);
			dllc_show_addr(m, svc->af, &svc->addr, svc->port);
			seq_putc(m, ' ');
		}
		dllc_show_addr(m, dest->af, &dest->addr, dest->port);
		d = dllc_lookup(st, dest);
		if (d && d->written)
			seq_printf(m, " %u %u", d->load,
				   jiffies_to_msecs(now - d->stamp));
		else
			seq_puts(m, " - -");
		seq_printf(m, " %u %d %d\n", dllc_effective(d, st->average),
			   max(ip_vs_dest_conn_overhead(dest), 0),
			   atomic_read(&dest->weight));
	}
	rcu_read_unlock();
}

static int dllc_proc_show(struct seq_file *m, void *v)
{
	struct net *net = seq_file_single_net(m);
	struct dllc_service *st;
	u64 now;

	seq_puts(m, "# service destination load age_ms effective overhead weight\n");
	mutex_lock(&dllc_mutex);
	/* After the lock: no load is stamped later than now. */
	now = get_jiffies_64();
	list_for_each_entry(st, &dllc_services, node)
		if (net_eq(st->svc->ipvs->net, net))
			dllc_show_service(m, st, now);
	mutex_unlock(&dllc_mutex);
	return 0;
}

static int __net_init dllc_net_init(struct net *net)
{
	if (!proc_create_net_single_write(DLLC_PROC_NAME, 0600, net->proc_net,
					  dllc_proc_show, dllc_proc_write, NULL))
		return -ENOMEM;
	return 0;
}

static void __net_exit dllc_net_exit(struct net *net)
{
	remove_proc_entry(DLLC_PROC_NAME, net->proc_net);
}

static struct pernet_operations dllc_net_ops = {
	.init = dllc_net_init,
	.exit = dllc_net_exit,
};

static struct ip_vs_scheduler ip_vs_dllc_scheduler = {
	.name =		"dllc",
	.refcnt =	ATOMIC_INIT(0),
	.module =	THIS_MODULE,
	.n_list =	LIST_HEAD_INIT(ip_vs_dllc_scheduler.n_list),
	.init_service =	dllc_init_svc,
	.done_service =	dllc_done_svc,
	.add_dest =	dllc_add_dest,
	.del_dest =	dllc_del_dest,
	.schedule =	dllc_schedule,
};

static int __init ip_vs_dllc_init(void)
{
	int err;

	err = register_pernet_subsys(&dllc_net_ops);
	if (err)
		return err;
	err = register_ip_vs_scheduler(&ip_vs_dllc_scheduler);
	if (err)
		unregister_pernet_subsys(&dllc_net_ops);
	return err;
}

static void __exit ip_vs_dllc_cleanup(void)
{
	/* No service uses dllc: each would hold a reference on the module. */
	unregister_ip_vs_scheduler(&ip_vs_dllc_scheduler);
	unregister_pernet_subsys(&dllc_net_ops);
	synchronize_rcu();
}

module_init(ip_vs_dllc_init);
module_exit(ip_vs_dllc_cleanup);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ipvs dynamic least load and connection scheduler");
MODULE_VERSION(DLLC_VERSION);
