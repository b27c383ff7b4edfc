// fnbench: the libpq side of flownode's benchmark suite (bench/run.sh drives it).
//
//   fnbench copy      CONNINFO TABLE NROWS ORDER SEED
//       COPY FROM STDIN of NROWS generated rows (ts, host, v); prints the seconds
//       the COPY took (generation is done before the clock starts).
//   fnbench multirow  CONNINFO TABLE NROWS BATCH ORDER SEED
//       autocommit multi-row INSERT ... VALUES of BATCH rows per statement (literal
//       SQL, built before the clock starts); prints the seconds.
//   fnbench ingest    CONNINFO copy|multirow ORDER NROWS ROUNDS TABLE...
//       ROUNDS rounds; each runs every TABLE once (order rotated every round), after
//       TRUNCATE and CHECKPOINT, with the same rows (multi-row: 1,000 per statement),
//       each run on a new connection. Prints "round<TAB>table<TAB>seconds<TAB>backend
//       CPU seconds" per run.
//   fnbench sql       CONNINFO < SCRIPT
//       runs one statement per line. `@name SQL` is timed: prints "name<TAB>ms";
//       `@name +self SQL` also samples this session's backend memory while the
//       statement runs, `@name +pid=N SQL` samples process N instead, and both then
//       print "name<TAB>ms<TAB>peak RssAnon kB<TAB>VmHWM kB"; `@name +value SQL`
//       prints "name<TAB>ms<TAB>first value of the result". `$var SQL` keeps the
//       first value of the result; ${var} is replaced in later lines; `=name SQL`
//       prints "name<TAB>first value". Other lines run untimed. Lines starting
//       with # are skipped.
//   fnbench freshness CONNINFO TABLE SINK FLOW SCHEDULE WRITERS BATCH OUTCSV ALIGN
//       WRITERS threads insert BATCH-row transactions following SCHEDULE
//       ("rows/s:seconds,rows/s:seconds,..." in total over the writers); a poller
//       reads the sink every 10 ms. ALIGN=1: a warm-up at the first rate runs until
//       the next wall-clock minute, so that every segment covers whole one-minute
//       windows (segment -1 in the output). Writes one line per committed batch to
//       OUTCSV: commit offset (s), lag (ms), rows, segment; the flow's refreshes
//       (sampled every 50 ms from flownode.flows) to OUTCSV.refresh.csv; per
//       segment (batches by the time they were due) the requested and achieved rate
//       (its rows over the time until the last of them committed), late sends, the
//       machine's CPU (/proc/stat) and the worker's CPU to OUTCSV.segments.csv;
//       prints a summary.
//   fnbench poll CONNINFO INTERVAL_MS STOPFILE SQL
//       runs SQL every INTERVAL_MS until STOPFILE exists (at most 10 minutes);
//       prints "ms since start<TAB>column 1<TAB>column 2..." per row.
//   fnbench interrupt CONNINFO FLOW DELAY_MS terminate|command [SHELL COMMAND]
//       starts flush_flow(FLOW) on one connection, waits until the flow's worker
//       has been in a refresh for DELAY_MS, then sends pg_terminate_backend to it
//       (or runs SHELL COMMAND, e.g. a fast shutdown) and polls /proc until the
//       worker process is gone. Prints "gone_ms<TAB>command_ms<TAB>in_refresh_ms
//       <TAB>flush_ms" (command_ms: the command's own duration, flush_ms: the
//       flush's total time when it survived, else -1). Exits with 3 (nothing sent)
//       when the flush ends before one refresh statement lasted DELAY_MS.
//   fnbench cpu PIDFILE
//       prints the CPU seconds used so far by the pids listed in PIDFILE, and how
//       many of them exist.
//
// ORDER is `inorder` (100 rows per minute from 2024-06-01, 10 hosts) or `scattered`
// (uniformly random over the year 2024). Timestamps are written in UTC.
#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string &msg) {
	std::fprintf(stderr, "fnbench: %s\n", msg.c_str());
	std::exit(1);
}

PGconn *connect(const std::string &conninfo) {
	PGconn *c = PQconnectdb(conninfo.c_str());
	if (PQstatus(c) != CONNECTION_OK)
		die(std::string("connection failed: ") + PQerrorMessage(c));
	return c;
}

void exec_ok(PGconn *c, const std::string &sql) {
	PGresult *r = PQexec(c, sql.c_str());
	ExecStatusType st = PQresultStatus(r);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		die("statement failed: " + std::string(PQerrorMessage(c)) + "\n  " + sql.substr(0, 300));
	PQclear(r);
}

// CPU time of a process, in seconds (same machine as the server): the scheduler's
// exact run time (/proc/PID/schedstat, ns) when the kernel has it, else utime +
// stime in clock ticks (too coarse for processes that run briefly and often).
double proc_cpu_seconds(int pid) {
	std::ifstream ss("/proc/" + std::to_string(pid) + "/schedstat");
	unsigned long long run_ns;
	if (ss >> run_ns)
		return static_cast<double>(run_ns) / 1e9;
	std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
	std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
	size_t rp = s.rfind(')');
	if (rp == std::string::npos)
		return 0;
	std::istringstream is(s.substr(rp + 2));
	std::vector<std::string> fields;
	for (std::string x; is >> x;)
		fields.push_back(x);
	// fields[0] is the state (field 3 of proc(5)); utime and stime are fields 14, 15
	if (fields.size() < 13)
		return 0;
	return (std::atof(fields[11].c_str()) + std::atof(fields[12].c_str())) / sysconf(_SC_CLK_TCK);
}

double seconds_since(Clock::time_point t0) {
	return std::chrono::duration<double>(Clock::now() - t0).count();
}

// ---- timestamps ----

constexpr int64_t kUsecPerSec = 1000000;
constexpr int64_t kUsecPerMin = 60 * kUsecPerSec;

// Days since 1970-01-01 to civil date (Howard Hinnant's algorithm).
void civil_from_days(int64_t z, int *y, unsigned *m, unsigned *d) {
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = static_cast<unsigned>(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t yy = static_cast<int64_t>(yoe) + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = static_cast<int>(yy + (*m <= 2));
}

// Unix microseconds -> "YYYY-MM-DD HH:MM:SS.ffffff+00".
void format_ts(int64_t us, char *out) { // out: at least 64 bytes
	int64_t secs = us >= 0 ? us / kUsecPerSec : -((-us + kUsecPerSec - 1) / kUsecPerSec);
	int64_t frac = us - secs * kUsecPerSec;
	int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
	int64_t sod = secs - days * 86400;
	int y;
	unsigned m, d;
	civil_from_days(days, &y, &m, &d);
	std::snprintf(out, 64, "%04d-%02u-%02u %02d:%02d:%02d.%06d+00", y, m, d, static_cast<int>(sod / 3600),
	              static_cast<int>(sod / 60 % 60), static_cast<int>(sod % 60), static_cast<int>(frac));
}

constexpr int64_t kJun2024 = 1717200000LL * kUsecPerSec; // 2024-06-01 00:00:00 UTC
constexpr int64_t kJan2024 = 1704067200LL * kUsecPerSec; // 2024-01-01 00:00:00 UTC
constexpr int64_t kYear2024 = 366LL * 86400 * kUsecPerSec;

struct Row {
	int64_t ts;
	int host;
	double v;
};

std::vector<Row> gen_rows(int64_t n, const std::string &order, uint64_t seed) {
	std::mt19937_64 rng(seed);
	std::vector<Row> rows(static_cast<size_t>(n));
	bool inorder = order == "inorder";
	if (!inorder && order != "scattered")
		die("ORDER must be inorder or scattered");
	for (int64_t i = 0; i < n; i++) {
		Row &r = rows[static_cast<size_t>(i)];
		// 100 rows per minute: one every 0.6 s
		r.ts = inorder ? kJun2024 + i * 600000 : kJan2024 + static_cast<int64_t>(rng() % kYear2024);
		r.host = static_cast<int>(i % 10);
		r.v = static_cast<double>(rng() % 400) * 0.25;
	}
	return rows;
}

// ---- copy / multirow ----

std::string copy_data(const std::vector<Row> &rows) {
	std::string data;
	data.reserve(rows.size() * 48);
	char ts[64], line[128];
	for (const Row &r : rows) {
		format_ts(r.ts, ts);
		int n = std::snprintf(line, sizeof line, "%s\thost-%d\t%.2f\n", ts, r.host, r.v);
		data.append(line, static_cast<size_t>(n));
	}
	return data;
}

// The VALUES lists of the multi-row statements, `batch` rows each.
std::vector<std::string> values_lists(const std::vector<Row> &rows, int64_t batch) {
	std::vector<std::string> out;
	char ts[64], tuple[160];
	for (size_t i = 0; i < rows.size(); i += static_cast<size_t>(batch)) {
		std::string s;
		size_t end = std::min(rows.size(), i + static_cast<size_t>(batch));
		for (size_t j = i; j < end; j++) {
			format_ts(rows[j].ts, ts);
			std::snprintf(tuple, sizeof tuple, "%s('%s','host-%d',%.2f)", j > i ? "," : "", ts, rows[j].host,
			              rows[j].v);
			s += tuple;
		}
		out.push_back(std::move(s));
	}
	return out;
}

struct RunTime {
	double seconds;
	double backend_cpu;
};

// COPY FROM STDIN of `data` in 64 kB chunks, on a fresh connection.
RunTime run_copy(const std::string &conninfo, const std::string &table, const std::string &data) {
	PGconn *c = connect(conninfo);
	double cpu0 = proc_cpu_seconds(PQbackendPID(c));
	auto t0 = Clock::now();
	PGresult *res = PQexec(c, ("COPY " + table + " (ts, host, v) FROM STDIN").c_str());
	if (PQresultStatus(res) != PGRES_COPY_IN)
		die(std::string("COPY failed: ") + PQerrorMessage(c));
	PQclear(res);
	for (size_t off = 0; off < data.size(); off += 65536) {
		int len = static_cast<int>(std::min<size_t>(65536, data.size() - off));
		if (PQputCopyData(c, data.data() + off, len) != 1)
			die(std::string("PQputCopyData: ") + PQerrorMessage(c));
	}
	if (PQputCopyEnd(c, nullptr) != 1)
		die(std::string("PQputCopyEnd: ") + PQerrorMessage(c));
	while ((res = PQgetResult(c)) != nullptr) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			die(std::string("COPY failed: ") + PQerrorMessage(c));
		PQclear(res);
	}
	RunTime rt{seconds_since(t0), 0};
	rt.backend_cpu = proc_cpu_seconds(PQbackendPID(c)) - cpu0;
	PQfinish(c);
	return rt;
}

// Autocommit multi-row INSERTs, on a fresh connection.
RunTime run_multirow(const std::string &conninfo, const std::string &table,
                     const std::vector<std::string> &lists) {
	std::vector<std::string> stmts;
	for (const auto &l : lists)
		stmts.push_back("INSERT INTO " + table + " (ts, host, v) VALUES " + l);
	PGconn *c = connect(conninfo);
	double cpu0 = proc_cpu_seconds(PQbackendPID(c));
	auto t0 = Clock::now();
	for (const auto &s : stmts)
		exec_ok(c, s);
	RunTime rt{seconds_since(t0), 0};
	rt.backend_cpu = proc_cpu_seconds(PQbackendPID(c)) - cpu0;
	PQfinish(c);
	return rt;
}

int cmd_copy(int argc, char **argv) {
	if (argc != 7)
		die("usage: copy CONNINFO TABLE NROWS ORDER SEED");
	auto rows = gen_rows(std::atoll(argv[4]), argv[5], std::strtoull(argv[6], nullptr, 10));
	RunTime rt = run_copy(argv[2], argv[3], copy_data(rows));
	std::printf("%.6f %.3f\n", rt.seconds, rt.backend_cpu);
	return 0;
}

int cmd_multirow(int argc, char **argv) {
	if (argc != 8)
		die("usage: multirow CONNINFO TABLE NROWS BATCH ORDER SEED");
	auto rows = gen_rows(std::atoll(argv[4]), argv[6], std::strtoull(argv[7], nullptr, 10));
	RunTime rt = run_multirow(argv[2], argv[3], values_lists(rows, std::atoll(argv[5])));
	std::printf("%.6f %.3f\n", rt.seconds, rt.backend_cpu);
	return 0;
}

// Alternating runs: every round runs each table once (TRUNCATE and CHECKPOINT
// before each run, the order rotated every round), same rows every time.
int cmd_ingest(int argc, char **argv) {
	if (argc < 8)
		die("usage: ingest CONNINFO copy|multirow ORDER NROWS ROUNDS TABLE...");
	std::string conninfo = argv[2], method = argv[3];
	auto rows = gen_rows(std::atoll(argv[5]), argv[4], 1);
	int rounds = std::atoi(argv[6]);
	std::vector<std::string> tables(argv + 7, argv + argc);
	std::string data;
	std::vector<std::string> lists;
	if (method == "copy")
		data = copy_data(rows);
	else if (method == "multirow")
		lists = values_lists(rows, 1000);
	else
		die("METHOD must be copy or multirow");
	PGconn *ctl = connect(conninfo);
	for (int r = 1; r <= rounds; r++) {
		for (size_t j = 0; j < tables.size(); j++) {
			const std::string &t = tables[(j + static_cast<size_t>(r)) % tables.size()];
			exec_ok(ctl, "TRUNCATE " + t);
			exec_ok(ctl, "CHECKPOINT");
			RunTime rt = method == "copy" ? run_copy(conninfo, t, data) : run_multirow(conninfo, t, lists);
			std::printf("%d\t%s\t%.6f\t%.3f\n", r, t.c_str(), rt.seconds, rt.backend_cpu);
			std::fflush(stdout);
		}
	}
	PQfinish(ctl);
	return 0;
}

// ---- sql script with timed statements and memory sampling ----

struct MemPeak {
	long rss_anon_kb = 0;
	long vmhwm_kb = 0;
};

bool read_mem(int pid, MemPeak *m) {
	std::ifstream f("/proc/" + std::to_string(pid) + "/status");
	if (!f)
		return false;
	std::string key;
	long val;
	std::string line;
	while (std::getline(f, line)) {
		std::istringstream ls(line);
		if (!(ls >> key >> val))
			continue;
		if (key == "RssAnon:")
			m->rss_anon_kb = std::max(m->rss_anon_kb, val);
		else if (key == "VmHWM:")
			m->vmhwm_kb = std::max(m->vmhwm_kb, val);
	}
	return true;
}

int cmd_sql(int argc, char **argv) {
	if (argc != 3)
		die("usage: sql CONNINFO < SCRIPT");
	PGconn *c = connect(argv[2]);
	std::map<std::string, std::string> vars;
	std::string line;
	while (std::getline(std::cin, line)) {
		// ${var} substitution
		for (size_t p; (p = line.find("${")) != std::string::npos;) {
			size_t e = line.find('}', p);
			if (e == std::string::npos)
				die("unterminated ${ in: " + line);
			std::string name = line.substr(p + 2, e - p - 2);
			if (!vars.count(name))
				die("unknown variable " + name);
			line.replace(p, e - p + 1, vars[name]);
		}
		if (line.empty() || line[0] == '#')
			continue;
		if (line[0] == '$') {
			size_t sp = line.find(' ');
			std::string name = line.substr(1, sp - 1);
			PGresult *r = PQexec(c, line.substr(sp + 1).c_str());
			if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) < 1)
				die("statement failed: " + std::string(PQerrorMessage(c)) + "\n  " + line);
			vars[name] = PQgetvalue(r, 0, 0);
			PQclear(r);
			continue;
		}
		if (line[0] == '=') { // `=name SQL`: print "name<TAB>first value"
			size_t sp = line.find(' ');
			PGresult *r = PQexec(c, line.substr(sp + 1).c_str());
			if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) < 1)
				die("statement failed: " + std::string(PQerrorMessage(c)) + "\n  " + line);
			std::printf("%s\t%s\n", line.substr(1, sp - 1).c_str(), PQgetvalue(r, 0, 0));
			PQclear(r);
			continue;
		}
		if (line[0] != '@') {
			exec_ok(c, line);
			continue;
		}
		size_t sp = line.find(' ');
		std::string name = line.substr(1, sp - 1);
		std::string rest = line.substr(sp + 1);
		int watch = 0;
		bool want_value = false;
		if (rest.rfind("+self ", 0) == 0) {
			watch = PQbackendPID(c);
			rest = rest.substr(6);
		} else if (rest.rfind("+pid=", 0) == 0) {
			size_t sp2 = rest.find(' ');
			watch = std::atoi(rest.substr(5, sp2 - 5).c_str());
			rest = rest.substr(sp2 + 1);
		} else if (rest.rfind("+value ", 0) == 0) {
			want_value = true;
			rest = rest.substr(7);
		}
		MemPeak peak;
		std::atomic<bool> stop{false};
		std::thread sampler;
		if (watch > 0) {
			read_mem(watch, &peak);
			sampler = std::thread([&] {
				while (!stop.load()) {
					read_mem(watch, &peak);
					std::this_thread::sleep_for(std::chrono::milliseconds(10));
				}
			});
		}
		auto t0 = Clock::now();
		if (want_value) {
			PGresult *r = PQexec(c, rest.c_str());
			double ms = seconds_since(t0) * 1000.0;
			if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) < 1)
				die("statement failed: " + std::string(PQerrorMessage(c)) + "\n  " + line);
			std::printf("%s\t%.3f\t%s\n", name.c_str(), ms, PQgetvalue(r, 0, 0));
			PQclear(r);
			std::fflush(stdout);
			continue;
		}
		exec_ok(c, rest);
		double ms = seconds_since(t0) * 1000.0;
		if (watch > 0) {
			stop = true;
			sampler.join();
			read_mem(watch, &peak);
			std::printf("%s\t%.3f\t%ld\t%ld\n", name.c_str(), ms, peak.rss_anon_kb, peak.vmhwm_kb);
		} else
			std::printf("%s\t%.3f\n", name.c_str(), ms);
		std::fflush(stdout);
	}
	PQfinish(c);
	return 0;
}

// ---- freshness under load ----

struct Batch {
	int64_t minute; // window start, unix usec
	int64_t seq;
	Clock::time_point committed;
	int segment;
};

struct Sample {
	double at_s; // commit, seconds since the start
	double lag_ms;
	int rows;
	int segment;
};

// One part of the load: a total rate for a duration. Segment -1 is the warm-up.
struct Segment {
	int index;
	double rate;
	double start_s, end_s; // since t0
};

// The machine's CPU: (busy jiffies, total jiffies) from /proc/stat's first line.
std::pair<double, double> machine_cpu() {
	std::ifstream f("/proc/stat");
	std::string cpu;
	f >> cpu;
	double v, busy = 0, total = 0;
	for (int i = 0; i < 10 && (f >> v); i++) {
		total += v;
		if (i != 3 && i != 4) // idle, iowait
			busy += v;
	}
	return {busy, total};
}

int cmd_freshness(int argc, char **argv) {
	if (argc != 11)
		die("usage: freshness CONNINFO TABLE SINK FLOW SCHEDULE WRITERS BATCH OUTCSV ALIGN");
	std::string conninfo = argv[2], table = argv[3], sink = argv[4], flow = argv[5];
	std::string schedule = argv[6];
	int writers = std::atoi(argv[7]);
	int batch = std::atoi(argv[8]);
	std::string out = argv[9];
	bool align = std::atoi(argv[10]) != 0;
	std::vector<std::pair<double, double>> refreshes; // (finished at s, duration ms)

	auto t0 = Clock::now() + std::chrono::milliseconds(200);
	double t0_unix =
	    std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() + 0.2;
	std::vector<Segment> segs;
	double at = 0;
	if (align) { // warm up at the first rate until the next minute starts (at least 1 s)
		double boundary = std::ceil((t0_unix + 1.0) / 60.0) * 60.0;
		at = boundary - t0_unix;
	}
	{
		std::istringstream ss(schedule);
		std::string part;
		int k = 0;
		while (std::getline(ss, part, ',')) {
			size_t colon = part.find(':');
			if (colon == std::string::npos)
				die("SCHEDULE must be rate:seconds,...");
			double rate = std::atof(part.substr(0, colon).c_str());
			double secs = std::atof(part.substr(colon + 1).c_str());
			if (k == 0 && at > 0)
				segs.push_back(Segment{-1, rate, 0, at});
			segs.push_back(Segment{k++, rate, at, at + secs});
			at += secs;
		}
	}
	if (segs.empty())
		die("empty SCHEDULE");
	double seconds = segs.back().end_s;
	auto segment_at = [&](double s) -> const Segment & {
		for (const Segment &g : segs)
			if (s < g.end_s)
				return g;
		return segs.back();
	};

	std::mutex mu;
	std::vector<std::vector<Batch>> pending(static_cast<size_t>(writers)); // per writer, commit order
	std::vector<size_t> head(static_cast<size_t>(writers), 0);
	std::vector<Sample> samples;
	std::atomic<int> writers_done{0};
	// per segment (by the time a batch was due): rows, batches sent more than 100 ms
	// late, and the last commit of its batches (achieved rate = its rows over the time
	// from its start until then, or its length if that is longer)
	std::vector<long> seg_rows(segs.size() + 1, 0), seg_late(segs.size() + 1, 0);
	std::vector<double> seg_last(segs.size() + 1, 0);

	std::vector<std::thread> threads;
	for (int w = 0; w < writers; w++) {
		threads.emplace_back([&, w] {
			PGconn *c = connect(conninfo);
			std::string sql = "INSERT INTO " + table +
			                  " (ts, writer, seq, v) SELECT $1::timestamptz, $2::int, $3::bigint, g * 0.5 "
			                  "FROM generate_series(1, $4::int) g";
			PGresult *p = PQprepare(c, "ins", sql.c_str(), 4, nullptr);
			if (PQresultStatus(p) != PGRES_COMMAND_OK)
				die(std::string("prepare: ") + PQerrorMessage(c));
			PQclear(p);
			std::string bs = std::to_string(batch), ws = std::to_string(w);
			// writers start staggered so commits are spread evenly
			double first_interval = batch * writers / segs[0].rate;
			double next_s = first_interval * w / writers;
			for (int64_t seq = 1;; seq++) {
				if (next_s >= seconds)
					break;
				auto next =
				    t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(next_s));
				const Segment &g = segment_at(next_s);
				size_t gi = static_cast<size_t>(&g - segs.data());
				auto now = Clock::now();
				bool late = false;
				if (now < next)
					std::this_thread::sleep_until(next);
				else if (now - next > std::chrono::milliseconds(100))
					late = true;
				// the row's time: the wall clock now (same machine as the server)
				int64_t ts = std::chrono::duration_cast<std::chrono::microseconds>(
				                 std::chrono::system_clock::now().time_since_epoch())
				                 .count();
				char tsbuf[64];
				format_ts(ts, tsbuf);
				std::string ss = std::to_string(seq);
				const char *vals[4] = {tsbuf, ws.c_str(), ss.c_str(), bs.c_str()};
				PGresult *r = PQexecPrepared(c, "ins", 4, vals, nullptr, nullptr, 0);
				if (PQresultStatus(r) != PGRES_COMMAND_OK)
					die(std::string("insert: ") + PQerrorMessage(c));
				PQclear(r);
				auto committed = Clock::now();
				double cs = std::chrono::duration<double>(committed - t0).count();
				const Segment &cg = segment_at(cs);
				{
					std::lock_guard<std::mutex> lk(mu);
					pending[static_cast<size_t>(w)].push_back(Batch{
					    ts - ((ts % kUsecPerMin) + kUsecPerMin) % kUsecPerMin, seq, committed, cg.index});
					seg_rows[gi] += batch;
					seg_last[gi] = std::max(seg_last[gi], cs);
					if (late)
						seg_late[gi]++;
				}
				next_s += batch * writers / g.rate;
			}
			PQfinish(c);
			writers_done++;
		});
	}

	// the poller: the sink's max(seq) per (window, writer) for the recent windows
	PGconn *pc = connect(conninfo);
	std::string q = "SELECT (extract(epoch FROM minute) * 1000000)::bigint, writer, max_seq FROM " + sink +
	                " WHERE minute >= now() - interval '5 minutes'";
	std::string rq = "SELECT runs, extract(epoch FROM last_run_duration) * 1000, "
	                 "extract(epoch FROM clock_timestamp() - last_run_at), worker_pid FROM flownode.flows "
	                 "NATURAL JOIN (SELECT flow_id, runs, last_run_duration FROM flownode.flow_info) i "
	                 "WHERE flow_name = '" +
	                 flow + "'";
	long polls = 0, last_runs = -1;
	int worker_pid = 0;
	{ // known before the first segment starts, so that its worker CPU is measured too
		PGresult *wr =
		    PQexec(pc, ("SELECT worker_pid FROM flownode.flows WHERE flow_name = '" + flow + "'").c_str());
		if (PQresultStatus(wr) == PGRES_TUPLES_OK && PQntuples(wr) == 1 && !PQgetisnull(wr, 0, 0))
			worker_pid = std::atoi(PQgetvalue(wr, 0, 0));
		PQclear(wr);
	}
	// per segment: the machine's CPU and the worker's at its start (sampled by the poller)
	std::vector<std::pair<double, double>> seg_cpu(segs.size() + 1, {-1, -1});
	std::vector<double> seg_wcpu(segs.size() + 1, -1);
	size_t seg_seen = 0;
	auto give_up =
	    t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds + 60));
	for (;;) {
		double now_s = std::chrono::duration<double>(Clock::now() - t0).count();
		while (seg_seen <= segs.size() &&
		       (seg_seen == segs.size() ? now_s >= seconds : now_s >= segs[seg_seen].start_s)) {
			seg_cpu[seg_seen] = machine_cpu();
			seg_wcpu[seg_seen] = worker_pid > 0 ? proc_cpu_seconds(worker_pid) : -1;
			seg_seen++;
		}
		PGresult *r = PQexec(pc, q.c_str());
		if (PQresultStatus(r) != PGRES_TUPLES_OK)
			die(std::string("poll: ") + PQerrorMessage(pc));
		auto seen = Clock::now();
		polls++;
		std::map<std::pair<int64_t, int>, int64_t> maxseq;
		for (int i = 0; i < PQntuples(r); i++)
			maxseq[{std::atoll(PQgetvalue(r, i, 0)), std::atoi(PQgetvalue(r, i, 1))}] =
			    std::atoll(PQgetvalue(r, i, 2));
		PQclear(r);
		if (polls % 5 == 0 || worker_pid == 0) { // the worker's last refresh, every 50 ms
			PGresult *rr = PQexec(pc, rq.c_str());
			if (PQresultStatus(rr) == PGRES_TUPLES_OK && PQntuples(rr) == 1 && !PQgetisnull(rr, 0, 1)) {
				long runs = std::atol(PQgetvalue(rr, 0, 0));
				if (runs != last_runs) {
					double ago = std::atof(PQgetvalue(rr, 0, 2));
					refreshes.emplace_back(std::chrono::duration<double>(Clock::now() - t0).count() - ago,
					                       std::atof(PQgetvalue(rr, 0, 1)));
					last_runs = runs;
				}
			}
			if (PQresultStatus(rr) == PGRES_TUPLES_OK && PQntuples(rr) == 1 && !PQgetisnull(rr, 0, 3))
				worker_pid = std::atoi(PQgetvalue(rr, 0, 3));
			PQclear(rr);
		}
		bool all_seen = true;
		{
			std::lock_guard<std::mutex> g(mu);
			for (int w = 0; w < writers; w++) {
				auto &pw = pending[static_cast<size_t>(w)];
				size_t &h = head[static_cast<size_t>(w)];
				while (h < pw.size()) {
					auto it = maxseq.find({pw[h].minute, w});
					if (it == maxseq.end() || it->second < pw[h].seq)
						break;
					samples.push_back(
					    Sample{std::chrono::duration<double>(pw[h].committed - t0).count(),
					           std::chrono::duration<double, std::milli>(seen - pw[h].committed).count(),
					           batch, pw[h].segment});
					h++;
				}
				if (h < pw.size())
					all_seen = false;
			}
		}
		if (writers_done.load() == writers && all_seen && seg_seen > segs.size())
			break;
		if (Clock::now() > give_up)
			die("the sink did not catch up within 60 s after the load ended");
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	for (auto &t : threads)
		t.join();
	PQfinish(pc);

	std::sort(samples.begin(), samples.end(),
	          [](const Sample &a, const Sample &b) { return a.at_s < b.at_s; });
	std::ofstream f(out);
	f << "commit_s,lag_ms,rows,segment\n";
	for (const Sample &s : samples)
		f << s.at_s << ',' << s.lag_ms << ',' << s.rows << ',' << s.segment << '\n';
	std::ofstream rf(out + ".refresh.csv");
	rf << "finished_s,duration_ms\n";
	for (const auto &x : refreshes)
		rf << x.first << ',' << x.second << '\n';
	std::ofstream sf(out + ".segments.csv");
	sf << "segment,requested_rows_per_s,start_s,end_s,rows,achieved_rows_per_s,late_sends,machine_cpu_pct,"
	      "worker_cpu_s\n";
	long total_rows = 0;
	for (size_t i = 0; i < segs.size(); i++) {
		const Segment &g = segs[i];
		double dur = g.end_s - g.start_s;
		double busy = seg_cpu[i + 1].first - seg_cpu[i].first,
		       total = seg_cpu[i + 1].second - seg_cpu[i].second;
		double wcpu = seg_wcpu[i] >= 0 && seg_wcpu[i + 1] >= 0 ? seg_wcpu[i + 1] - seg_wcpu[i] : -1;
		double took = std::max(dur, seg_last[i] - g.start_s);
		sf << g.index << ',' << g.rate << ',' << g.start_s << ',' << g.end_s << ',' << seg_rows[i] << ','
		   << (took > 0 ? seg_rows[i] / took : 0) << ',' << seg_late[i] << ','
		   << (total > 0 ? 100.0 * busy / total : -1) << ',' << wcpu << '\n';
		total_rows += seg_rows[i];
	}
	std::printf("batches=%zu rows=%ld achieved_rows_per_s=%.0f polls=%ld seconds=%.1f t0_unix=%.3f\n",
	            samples.size(), total_rows, seconds > 0 ? total_rows / seconds : 0.0, polls, seconds,
	            t0_unix);
	return 0;
}

// ---- a query polled until a file appears ----

int cmd_poll(int argc, char **argv) {
	if (argc != 6)
		die("usage: poll CONNINFO INTERVAL_MS STOPFILE SQL");
	PGconn *c = connect(argv[2]);
	int interval = std::atoi(argv[3]);
	std::string stop = argv[4], sql = argv[5];
	auto t0 = Clock::now();
	while (access(stop.c_str(), F_OK) != 0 && seconds_since(t0) < 600) {
		PGresult *r = PQexec(c, sql.c_str());
		if (PQresultStatus(r) != PGRES_TUPLES_OK)
			die("poll failed: " + std::string(PQerrorMessage(c)));
		double ms = seconds_since(t0) * 1000.0;
		for (int i = 0; i < PQntuples(r); i++) {
			std::printf("%.1f", ms);
			for (int j = 0; j < PQnfields(r); j++)
				std::printf("\t%s", PQgetisnull(r, i, j) ? "" : PQgetvalue(r, i, j));
			std::printf("\n");
		}
		PQclear(r);
		std::fflush(stdout);
		std::this_thread::sleep_for(std::chrono::milliseconds(interval));
	}
	PQfinish(c);
	return 0;
}

// ---- a worker interrupted in the middle of a refresh ----

// Whether a process still runs: a zombie (exited, not yet reaped) counts as gone.
bool process_alive(int pid) {
	std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
	if (!f)
		return false;
	std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
	size_t rp = s.rfind(')');
	return rp != std::string::npos && rp + 2 < s.size() && s[rp + 2] != 'Z' && s[rp + 2] != 'X';
}

int cmd_interrupt(int argc, char **argv) {
	if (argc < 6 || argc > 7)
		die("usage: interrupt CONNINFO FLOW DELAY_MS terminate|command [SHELL COMMAND]");
	std::string conninfo = argv[2], flow = argv[3], mode = argv[5];
	double delay_ms = std::atof(argv[4]);
	if (mode == "command" && argc != 7)
		die("command mode needs a SHELL COMMAND");
	PGconn *ctl = connect(conninfo);
	PGresult *r =
	    PQexec(ctl, ("SELECT worker_pid FROM flownode.flows WHERE flow_name = '" + flow + "'").c_str());
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1 || PQgetisnull(r, 0, 0))
		die("flow " + flow + " has no worker");
	int pid = std::atoi(PQgetvalue(r, 0, 0));
	PQclear(r);
	PGconn *fc = connect(conninfo);
	auto f0 = Clock::now();
	if (!PQsendQuery(fc, ("SELECT flownode.flush_flow('" + flow + "')").c_str()))
		die(std::string("flush: ") + PQerrorMessage(fc));
	// until the worker has been in a refresh transaction for delay_ms
	std::string aq = "SELECT state, extract(epoch FROM clock_timestamp() - query_start) * 1000 FROM "
	                 "pg_stat_activity WHERE pid = " +
	                 std::to_string(pid);
	double in_refresh = 0;
	for (;;) {
		r = PQexec(ctl, aq.c_str());
		if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
			die("the worker left pg_stat_activity before the interrupt");
		bool active = std::string(PQgetvalue(r, 0, 0)) == "active";
		in_refresh = active ? std::atof(PQgetvalue(r, 0, 1)) : 0;
		PQclear(r);
		if (active && in_refresh >= delay_ms)
			break;
		// the flush may end before any one refresh statement lasted delay_ms (a refresh
		// is several statements): exit 3, and the caller tries again with a shorter delay
		if (!PQconsumeInput(fc))
			die(std::string("flush: ") + PQerrorMessage(fc));
		if (!PQisBusy(fc)) {
			while ((r = PQgetResult(fc)) != nullptr)
				PQclear(r);
			std::fprintf(stderr, "fnbench: the flush ended before a refresh statement lasted %.0f ms\n",
			             delay_ms);
			return 3;
		}
		if (seconds_since(f0) > 120)
			die("the worker did not start a refresh within 120 s");
		std::this_thread::sleep_for(std::chrono::milliseconds(2));
	}
	auto t0 = Clock::now();
	double command_ms = -1;
	std::thread cmd;
	std::atomic<bool> cmd_done{false};
	if (mode == "terminate") {
		r = PQexec(ctl, ("SELECT pg_terminate_backend(" + std::to_string(pid) + ")").c_str());
		if (PQresultStatus(r) != PGRES_TUPLES_OK)
			die(std::string("pg_terminate_backend: ") + PQerrorMessage(ctl));
		PQclear(r);
	} else {
		std::string shell = argv[6];
		cmd = std::thread([&, shell] {
			if (std::system(shell.c_str()) != 0)
				std::fprintf(stderr, "fnbench: the command failed: %s\n", shell.c_str());
			command_ms = seconds_since(t0) * 1000.0;
			cmd_done = true;
		});
	}
	while (process_alive(pid)) {
		if (seconds_since(t0) > 120)
			die("the worker was still there 120 s after the interrupt");
		std::this_thread::sleep_for(std::chrono::microseconds(500));
	}
	double gone_ms = seconds_since(t0) * 1000.0;
	double flush_ms = -1;
	if (mode == "terminate") {
		// the flush goes on with the next worker: it must still return, and succeed
		while ((r = PQgetResult(fc)) != nullptr) {
			if (PQresultStatus(r) != PGRES_TUPLES_OK)
				die(std::string("the flush failed after the interrupt: ") + PQerrorMessage(fc));
			PQclear(r);
		}
		flush_ms = seconds_since(f0) * 1000.0;
		PQfinish(ctl);
	} else {
		cmd.join();
		// the server is gone: the connections are dead
	}
	PQfinish(fc);
	std::printf("%.1f\t%.1f\t%.1f\t%.1f\n", gone_ms, command_ms, in_refresh, flush_ms);
	return 0;
}

// ---- CPU time of a set of processes ----

int cmd_cpu(int argc, char **argv) {
	if (argc != 3)
		die("usage: cpu PIDFILE");
	std::ifstream pf(argv[2]);
	double total = 0;
	int pid, n = 0;
	while (pf >> pid) {
		if (access(("/proc/" + std::to_string(pid)).c_str(), F_OK) != 0)
			continue;
		total += proc_cpu_seconds(pid);
		n++;
	}
	std::printf("%.3f %d\n", total, n);
	return 0;
}

} // namespace

int main(int argc, char **argv) {
	if (argc < 2)
		die("usage: fnbench copy|multirow|ingest|sql|freshness|poll|interrupt|cpu ...");
	std::string cmd = argv[1];
	if (cmd == "copy")
		return cmd_copy(argc, argv);
	if (cmd == "multirow")
		return cmd_multirow(argc, argv);
	if (cmd == "ingest")
		return cmd_ingest(argc, argv);
	if (cmd == "sql")
		return cmd_sql(argc, argv);
	if (cmd == "freshness")
		return cmd_freshness(argc, argv);
	if (cmd == "cpu")
		return cmd_cpu(argc, argv);
	if (cmd == "poll")
		return cmd_poll(argc, argv);
	if (cmd == "interrupt")
		return cmd_interrupt(argc, argv);
	die("unknown command " + cmd);
}
