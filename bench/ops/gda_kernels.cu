/* The GPU initiator (issue 37): CUDA kernels that post EFA RDMA work requests
 * themselves — build the 64-byte WQE in the send queue libfabric 2.6's
 * query_qp_wqs hands out (mapped into the GPU), ring the SQ doorbell, and
 * poll completion queues whose rings are in GPU memory (cq_open_ext) — with
 * no CPU in between. The host side (bench/engine/gda.c) sets the queues up,
 * launches one kernel per size and reads the results back; the formats are
 * lib/efab_gda_wqe.h's (unit-tested on the host), the arguments
 * lib/efab_gda_args.h's.
 *
 * Threads: one block. Thread 0 owns the queue pair (producer index, consumer
 * indexes: no atomics — one owner per SQ, as rdma-core's own lock-free path
 * assumes one poster); the other threads of the block fill and check
 * payloads (-c). Stream: lanes [0, threads) of warp 0 write the WQEs of one
 * doorbell batch in parallel (lane l writes slot pc + l), lane 0 rings.
 * Ordering (as published EFA GPU code does, efa-dp-direct's
 * efa_cuda_flush_sq_wrs): WQE stores, __threadfence_system(), the doorbell
 * store, __threadfence_system(). A CQE is valid when its phase bit is the
 * expected one; its body is read after a fence.
 *
 * Times: %globaltimer (ns, the GPU's global timer; one clock for every SM)
 * for latencies and windows, its step measured every launch
 * (EFAB_GDA_OUT_CLOCK_RES); the post cost, a few hundred ns, in clock64 cycles
 * of the posting SM (post_ns[]), which the host converts with the cycles per
 * globaltimer second the launch measured (EFAB_GDA_OUT_CLOCK64_HZ). */
#include <stdint.h>

#include "efab_gda_args.h"

#define ST_PC 0
#define ST_DONE 1
#define ST_TXCC 2
#define ST_RXCC 3

__device__ __forceinline__ uint64_t gtimer(void)
{
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__device__ __forceinline__ uint8_t pat(uint64_t seq, uint64_t j)
{
	/* bench/engine/context.h efab_pattern */
	return (uint8_t)((seq * 131u + j * 7u + (j >> 8) * 13u) & 0xff);
}

__device__ __forceinline__ uint8_t tagof(uint64_t seq)
{
	return (uint8_t)(seq % 255u + 1u);
}

struct qs {
	uint32_t pc, done, txcc, rxcc;
};

__device__ __forceinline__ void fail(const efab_gda_args_t &a, uint64_t code, uint64_t detail,
				     uint64_t where)
{
	if (a.out[EFAB_GDA_OUT_STATUS] == EFAB_GDA_EOK) {
		a.out[EFAB_GDA_OUT_STATUS] = code;
		a.out[EFAB_GDA_OUT_DETAIL] = detail;
		a.out[EFAB_GDA_OUT_WHERE] = where;
	}
}

/* Write one WQE at producer index pc: 8 stores of 8 bytes into the mapped SQ. */
__device__ __forceinline__ void put_wqe(const efab_gda_args_t &a, uint32_t pc, unsigned op,
					int imm, uint32_t immv, uint64_t raddr, uint64_t laddr,
					uint32_t len)
{
	efab_gda_wqe_t w;
	efab_gda_wqe_rdma(&w, op, imm, immv, pc, a.req64, efab_gda_sq_phase(pc, a.sq_log2), &a.dest,
			  raddr, laddr, len);
	const uint64_t *src = (const uint64_t *)&w;
	volatile uint64_t *dst = (volatile uint64_t *)(a.sq + (size_t)(pc & (a.sq_n - 1)) * a.sq_entry);
#pragma unroll
	for (int k = 0; k < 8; k++)
		dst[k] = src[k];
	/* a 128-byte entry (efa_io_tx_wqe_128): the rest, inline room, zero */
	if (a.sq_entry == EFAB_GDA_WQE_BYTES_WIDE)
#pragma unroll
		for (int k = 8; k < 16; k++)
			dst[k] = 0;
}

__device__ __forceinline__ void ring(const efab_gda_args_t &a, uint32_t pc)
{
	__threadfence_system(); /* the WQEs (and the payload) before the doorbell */
	*(volatile uint32_t *)a.sq_db = efab_gda_sq_doorbell(pc);
	__threadfence_system();
}

/* One TX CQE if there is one: 1 taken, 0 none, -1 an error completion. */
__device__ __forceinline__ int tx_take(const efab_gda_args_t &a, qs &s)
{
	volatile efab_gda_cqe_t *e =
		(volatile efab_gda_cqe_t *)(a.tx_cq + (size_t)(s.txcc & (a.tx_cq_n - 1)) * EFAB_GDA_CQE_BYTES);
	uint8_t f = e->flags;
	if (!efab_gda_cqe_valid(f, s.txcc, a.tx_cq_log2))
		return 0;
	__threadfence();
	uint8_t st = e->status;
	efab_gda_cqe_t c;
	c.req_id = e->req_id;
	c.length = e->length;
	c.ah = e->ah;
	c.src_qp_num = e->src_qp_num;
	uint64_t req = efab_gda_tx_req_id(&c, a.req64);
	s.txcc++;
	if (st) {
		fail(a, EFAB_GDA_ECQE, ((uint64_t)st << 32) | (req & 0xffffffffu), EFAB_GDA_WTXCQ);
		return -1;
	}
	if (a.req64 && !efab_gda_req_in_flight(req, s.pc, a.sq_n)) {
		fail(a, EFAB_GDA_EREQID, req, EFAB_GDA_WTXCQ);
		return -1;
	}
	s.done++;
	return 1;
}

/* Until done reaches want (wrapping compare). */
__device__ int tx_wait(const efab_gda_args_t &a, qs &s, uint32_t want, uint64_t deadline)
{
	while ((int32_t)(s.done - want) < 0) {
		int r = tx_take(a, s);
		if (r < 0)
			return -1;
		if (!r && gtimer() > deadline) {
			fail(a, EFAB_GDA_ETIMEDOUT, want, EFAB_GDA_WTXCQ);
			return -1;
		}
	}
	return 0;
}

/* The next RX CQE (RDMA write with immediate, unsolicited): its immediate
 * must be imm. */
__device__ int rx_wait(const efab_gda_args_t &a, qs &s, uint32_t imm, uint64_t deadline)
{
	volatile efab_gda_cqe_t *e =
		(volatile efab_gda_cqe_t *)(a.rx_cq + (size_t)(s.rxcc & (a.rx_cq_n - 1)) * EFAB_GDA_CQE_BYTES);
	while (!efab_gda_cqe_valid(e->flags, s.rxcc, a.rx_cq_log2))
		if (gtimer() > deadline) {
			fail(a, EFAB_GDA_ETIMEDOUT, s.rxcc, EFAB_GDA_WRXCQ);
			return -1;
		}
	__threadfence();
	uint8_t st = e->status;
	uint32_t got = e->imm;
	s.rxcc++;
	if (st) {
		fail(a, EFAB_GDA_ECQE, ((uint64_t)st << 32) | s.rxcc, EFAB_GDA_WRXCQ);
		return -1;
	}
	if (got != imm) {
		fail(a, EFAB_GDA_EIMM, ((uint64_t)got << 32) | imm, EFAB_GDA_WRXCQ);
		return -1;
	}
	return 0;
}

__device__ int byte_wait(const efab_gda_args_t &a, const uint8_t *p, uint8_t want, uint64_t deadline)
{
	volatile const uint8_t *b = (volatile const uint8_t *)p;
	while (*b != want)
		if (gtimer() > deadline) {
			fail(a, EFAB_GDA_ETIMEDOUT, want, EFAB_GDA_WBYTE);
			return -1;
		}
	__threadfence();
	return 0;
}

/* Block-wide: fill [p, p+len) with message seq (tag last), or only the tag. */
__device__ void fill(uint8_t *p, uint64_t len, uint64_t seq, int whole)
{
	if (whole)
		for (uint64_t j = threadIdx.x; j + 1 < len; j += blockDim.x)
			p[j] = pat(seq, j);
	if (threadIdx.x == 0)
		p[len - 1] = tagof(seq);
}

/* Block-wide: mismatches of [p, p+len) against message seq, into *bad. */
__device__ void count_bad(const uint8_t *p, uint64_t len, uint64_t seq, unsigned long long *bad)
{
	volatile const uint8_t *v = (volatile const uint8_t *)p;
	unsigned long long mine = 0;
	for (uint64_t j = threadIdx.x; j + 1 < len; j += blockDim.x)
		mine += v[j] != pat(seq, j);
	if (threadIdx.x == 0)
		mine += v[len - 1] != tagof(seq);
	if (mine)
		atomicAdd(bad, mine);
}

/* Block-wide check of a received message; bytes still landing after the
 * last one (SRD places packets in any order) get up to ~2 ms (such a message
 * is counted in EFAB_GDA_OUT_LATE, as the CPU path counts them). */
__device__ void verify(const efab_gda_args_t &a, const uint8_t *p, uint64_t len, uint64_t seq,
		       uint64_t i, int settle)
{
	__shared__ unsigned long long bad;
	__shared__ int first_bad;
	int t;
	for (t = 0; t < (settle ? 2000 : 1); t++) {
		if (threadIdx.x == 0)
			bad = 0;
		__syncthreads();
		count_bad(p, len, seq, &bad);
		__syncthreads();
		int again = bad != 0;
		if (t == 0 && threadIdx.x == 0)
			first_bad = again;
		__syncthreads(); /* every thread has read bad before thread 0 clears it */
		if (!again)
			break;
		if (threadIdx.x == 0)
			__nanosleep(1000);
	}
	if (threadIdx.x == 0) {
		unsigned long long b = bad;
		if (!b && first_bad)
			a.out[EFAB_GDA_OUT_LATE]++;
		if (a.corrupt_every && (i + 1) % a.corrupt_every == 0)
			b++; /* EFAB_FAULT_CORRUPT: the check must catch a damaged message */
		a.out[EFAB_GDA_OUT_ERRORS] += b;
	}
	__syncthreads();
}

__device__ void clock_probe(const efab_gda_args_t &a)
{
	uint64_t best = ~0ull, t = gtimer(), start = t;
	for (int k = 0; k < 16;) {
		uint64_t u = gtimer();
		if (u != t) {
			if (u - t < best)
				best = u - t;
			t = u;
			k++;
		}
		if (u - start > 1000000)
			break;
	}
	a.out[EFAB_GDA_OUT_CLOCK_RES] = best;
	/* clock64 against globaltimer over ~20 us: the SM clock, a cross-check */
	uint64_t g0 = gtimer();
	long long c0 = clock64();
	while (gtimer() - g0 < 20000)
		;
	long long c1 = clock64();
	uint64_t g1 = gtimer();
	a.out[EFAB_GDA_OUT_CLOCK64_HZ] = (uint64_t)((double)(c1 - c0) * 1e9 / (double)(g1 - g0));
}

__device__ __forceinline__ void load_state(const efab_gda_args_t &a, qs &s)
{
	s.pc = a.state[ST_PC];
	s.done = a.state[ST_DONE];
	s.txcc = a.state[ST_TXCC];
	s.rxcc = a.state[ST_RXCC];
}

__device__ __forceinline__ void save_state(const efab_gda_args_t &a, const qs &s)
{
	a.state[ST_PC] = s.pc;
	a.state[ST_DONE] = s.done;
	a.state[ST_TXCC] = s.txcc;
	a.state[ST_RXCC] = s.rxcc;
	a.out[EFAB_GDA_OUT_POSTED] = s.pc;
	a.out[EFAB_GDA_OUT_COMPLETED] = s.done;
}

/* Put ping-pong: region per rank [rx0 | rx1 | tx0 | tx1] of max_size, message
 * seq uses halves seq & 1 (bench/ops/rma.c's layout). samples[] = round
 * trips (ns), post_ns[] = lane 0's WQE build + doorbell (ns). */
__device__ void pingpong(const efab_gda_args_t &a, qs &s)
{
	__shared__ int stop;
	uint64_t end = a.warm + a.n;
	if (threadIdx.x == 0)
		stop = 0;
	__syncthreads();
	for (uint64_t i = 0; i < end; i++) {
		uint64_t seq = a.seq0 + i;
		int p = (int)(seq & 1);
		uint8_t *rx = a.local + (size_t)p * a.max_size, *tx = a.local + (size_t)(2 + p) * a.max_size;
		uint64_t raddr = a.remote + (uint64_t)p * a.max_size;
		uint64_t deadline = gtimer() + a.timeout_ns;
		/* prepare (untimed): the source half is free once every write but the
		 * latest completed, then it carries message seq */
		if (threadIdx.x == 0 && s.pc - s.done > 1 && tx_wait(a, s, s.pc - 1, deadline))
			stop = 1;
		__syncthreads();
		if (stop)
			break;
		fill(tx, a.size, seq, a.check);
		__syncthreads();
		if (threadIdx.x == 0) {
			uint64_t t0 = 0, tp0, tp1, t1;
			int rc = 0;
			if (!a.initiator) {
				rc = a.has_imm ? rx_wait(a, s, (uint32_t)seq, deadline)
					       : byte_wait(a, rx + a.size - 1, tagof(seq), deadline);
			}
			t0 = gtimer();
			tp0 = (uint64_t)clock64();
			if (!rc) {
				put_wqe(a, s.pc, EFAB_IO_RDMA_WRITE, a.has_imm, (uint32_t)seq, raddr,
					(uint64_t)(uintptr_t)tx, (uint32_t)a.size);
				s.pc++;
				ring(a, s.pc);
			}
			tp1 = (uint64_t)clock64();
			if (!rc && a.initiator)
				rc = a.has_imm ? rx_wait(a, s, (uint32_t)seq, deadline)
					       : byte_wait(a, rx + a.size - 1, tagof(seq), deadline);
			t1 = gtimer();
			while (!rc && tx_take(a, s) > 0) /* completions already there, untimed */
				;
			if (a.out[EFAB_GDA_OUT_STATUS])
				rc = -1;
			if (rc)
				stop = 1;
			else if (a.initiator && i == 0)
				a.out[EFAB_GDA_OUT_FIRST_NS] = t1 - t0;
			else if (a.initiator && i >= a.warm) {
				a.samples[i - a.warm] = t1 - t0;
				a.post_ns[i - a.warm] = tp1 - tp0;
			} else if (!a.initiator && i >= a.warm)
				a.post_ns[i - a.warm] = tp1 - tp0;
		}
		__syncthreads();
		if (stop)
			break;
		if (a.check)
			verify(a, rx, a.size, seq, i, !a.has_imm);
	}
	if (threadIdx.x == 0 && !stop)
		tx_wait(a, s, s.pc, gtimer() + a.timeout_ns); /* the last pong's completion */
}

/* Get latency, initiator only: read the peer's tx0 (message seq0) into rx0,
 * to the read's own completion. */
__device__ void read_lat(const efab_gda_args_t &a, qs &s)
{
	__shared__ int stop;
	uint64_t end = a.warm + a.n;
	uint8_t *rx = a.local;
	uint64_t raddr = a.remote + 2 * a.max_size;
	if (threadIdx.x == 0)
		stop = 0;
	__syncthreads();
	for (uint64_t i = 0; i < end; i++) {
		if (a.check) { /* poison, so a read that moved nothing is caught */
			for (uint64_t j = threadIdx.x; j < a.size; j += blockDim.x)
				rx[j] = (uint8_t)((i & 0xff) ^ 0x5a);
			__syncthreads();
		}
		if (threadIdx.x == 0) {
			uint64_t deadline = gtimer() + a.timeout_ns;
			__threadfence_system();
			uint64_t t0 = gtimer(), tp0 = (uint64_t)clock64();
			put_wqe(a, s.pc, EFAB_IO_RDMA_READ, 0, 0, raddr, (uint64_t)(uintptr_t)rx,
				(uint32_t)a.size);
			s.pc++;
			ring(a, s.pc);
			uint64_t tp1 = (uint64_t)clock64();
			int rc = tx_wait(a, s, s.pc, deadline);
			uint64_t t1 = gtimer();
			if (rc)
				stop = 1;
			else if (i == 0)
				a.out[EFAB_GDA_OUT_FIRST_NS] = t1 - t0;
			else if (i >= a.warm) {
				a.samples[i - a.warm] = t1 - t0;
				a.post_ns[i - a.warm] = tp1 - tp0;
			}
		}
		__syncthreads();
		if (stop)
			break;
		if (a.check)
			verify(a, rx, a.size, a.seq0, i, 0);
	}
}

/* Stream: windows of a.window writes; lanes [0, threads) of warp 0 write the
 * WQEs of a doorbell batch. samples[] = window times, post_ns[] = per window,
 * lane 0's time in WQE writes + doorbells / operations. Launched with 32
 * threads. */
__device__ void stream(const efab_gda_args_t &a, qs &s)
{
	const unsigned lane = threadIdx.x;
	const uint32_t T = a.threads;
	uint64_t end = a.warm + a.n, tstart = 0, tlast = 0;
	int stop = 0;
	for (uint64_t w = 0; w < end && !stop; w++) {
		uint64_t deadline = 0, t0 = 0, post_total = 0;
		uint32_t base = 0;
		if (lane == 0) {
			deadline = gtimer() + a.timeout_ns;
			t0 = gtimer();
			if (w == a.warm)
				tstart = t0;
		}
		uint64_t posted = 0;
		while (posted < a.window) {
			uint32_t k = 0;
			if (lane == 0) {
				uint32_t left = (uint32_t)(a.window - posted);
				k = efab_gda_burst(left < T ? left : T, a.max_batch, a.sq_n, s.pc, s.done);
				while (!k) { /* the SQ is full: take completions */
					int r = tx_take(a, s);
					if (r < 0 || (!r && gtimer() > deadline)) {
						if (!r)
							fail(a, EFAB_GDA_ETIMEDOUT, s.pc, EFAB_GDA_WTXCQ);
						stop = 1;
						break;
					}
					k = efab_gda_burst(left < T ? left : T, a.max_batch, a.sq_n, s.pc, s.done);
				}
				base = s.pc;
			}
			stop = __shfl_sync(0xffffffffu, stop, 0);
			if (stop)
				break;
			k = __shfl_sync(0xffffffffu, k, 0);
			base = __shfl_sync(0xffffffffu, base, 0);
			uint64_t tp0 = lane == 0 ? (uint64_t)clock64() : 0;
			if (lane < k) {
				uint64_t op = posted + lane;
				uint64_t off = op * a.slot_step;
				put_wqe(a, base + lane, EFAB_IO_RDMA_WRITE, a.has_imm, (uint32_t)a.seq0,
					a.remote + off, (uint64_t)(uintptr_t)(a.local + a.tx_off + off),
					(uint32_t)a.size);
			}
			__syncwarp();
			if (lane == 0) {
				s.pc = base + k;
				ring(a, s.pc);
				post_total += (uint64_t)clock64() - tp0;
				while (tx_take(a, s) > 0)
					;
			}
			posted += k;
		}
		if (lane == 0 && !stop) {
			if (tx_wait(a, s, s.pc, deadline))
				stop = 1;
			uint64_t t1 = gtimer();
			tlast = t1;
			if (w == 0)
				a.out[EFAB_GDA_OUT_FIRST_NS] = t1 - t0;
			if (w >= a.warm) {
				a.samples[w - a.warm] = t1 - t0;
				a.post_ns[w - a.warm] = post_total / (a.window ? a.window : 1);
			}
		}
		stop = __shfl_sync(0xffffffffu, stop, 0);
	}
	if (lane == 0 && !stop && a.n)
		a.out[EFAB_GDA_OUT_ELAPSED_NS] = tlast - tstart;
}

/* put_bw -o writedata, the target: every RX CQE of the size, immediates checked. */
__device__ void rx_drain(const efab_gda_args_t &a, qs &s)
{
	if (threadIdx.x != 0)
		return;
	uint64_t deadline = gtimer() + a.timeout_ns;
	for (uint64_t k = 0; k < a.expect; k++) {
		if (rx_wait(a, s, (uint32_t)a.seq0, deadline))
			return;
		if (a.rx_slow_ns) /* test hook: a consumer slower than the NIC */
			for (uint64_t t = gtimer(); gtimer() - t < a.rx_slow_ns;)
				;
		deadline = gtimer() + a.timeout_ns;
	}
}

extern "C" __global__ void efab_gda_kernel(efab_gda_args_t a)
{
	__shared__ qs s;
	if (threadIdx.x == 0) {
		load_state(a, s);
		clock_probe(a);
	}
	__syncthreads();
	/* One direct call per mode, not a table of device function pointers: an
	 * indirect call on the GPU is not inlined (registers and time inside the
	 * timed loops), and the modes differ in who runs (stream: the first warp;
	 * the others decide for themselves, thread 0 or all). */
	switch (a.mode) {
	case EFAB_GDA_PINGPONG:
		pingpong(a, s);
		break;
	case EFAB_GDA_READ_LAT:
		read_lat(a, s);
		break;
	case EFAB_GDA_STREAM:
		if (threadIdx.x < 32)
			stream(a, s);
		break;
	case EFAB_GDA_RX_DRAIN:
		rx_drain(a, s);
		break;
	case EFAB_GDA_CLOCK:
		break;
	default:
		if (threadIdx.x == 0)
			fail(a, EFAB_GDA_EARGS, (uint64_t)a.mode, 0);
	}
	__syncthreads();
	if (threadIdx.x == 0)
		save_state(a, s);
}
