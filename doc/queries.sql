-- Example queries over an rbdecode database (also run by tests/queries.test).
-- Each query is preceded by a comment line starting with "-- Q:" naming it.

-- Q: top functions by samples
SELECT symbol, dso_short_name, count(*) AS samples,
       round(100.0 * count(*) / (SELECT count(*) FROM samples WHERE id > 0), 1) AS percent
FROM samples_view WHERE id > 0
GROUP BY symbol, dso_short_name ORDER BY samples DESC LIMIT 20;

-- Q: top processes and threads
SELECT command, pid, tid, count(*) AS samples
FROM samples_view WHERE id > 0 GROUP BY command, pid, tid ORDER BY samples DESC LIMIT 20;

-- Q: gaps on one CPU in a time window (here CPU -1 = records without a CPU, whole recording)
SELECT time_start, time_end, reason, bytes_lost, records_lost, file_offset
FROM gaps_view WHERE cpu = -1 OR cpu = 0 ORDER BY time_start;

-- Q: how complete is the trace between two times, per CPU
SELECT cpu, count(*) AS losses, sum(records_lost) AS records_lost, sum(bytes_lost) AS bytes_lost
FROM gaps WHERE time_start BETWEEN (SELECT min(time) FROM samples WHERE id > 0)
                             AND (SELECT max(time) FROM samples WHERE id > 0)
GROUP BY cpu;

-- Q: a process's call tree (inclusive samples per call path, root first)
WITH RECURSIVE
  hits(cp, n) AS (SELECT call_path_id, count(*) FROM samples WHERE id > 0 AND call_path_id > 0
                  GROUP BY call_path_id),
  up(cp, leaf, n) AS (SELECT cp, cp, n FROM hits
                      UNION ALL
                      SELECT p.parent_id, up.leaf, up.n FROM up JOIN call_paths p ON p.id = up.cp
                      WHERE p.parent_id > 0)
SELECT up.cp AS call_path, (SELECT name FROM symbols WHERE id = c.symbol_id) AS symbol,
       sum(up.n) AS inclusive_samples
FROM up JOIN call_paths c ON c.id = up.cp
GROUP BY up.cp ORDER BY inclusive_samples DESC LIMIT 30;

-- Q: samples per object, kernel against user space
SELECT dso_short_name, count(*) AS samples FROM samples_view WHERE id > 0
GROUP BY dso_short_name ORDER BY samples DESC;

-- Q: context switches of one command
SELECT time, cpu, comm_out, tid_out, comm_in, tid_in, flags FROM context_switches_view
ORDER BY time LIMIT 50;

-- Q: how the run went
SELECT name, value FROM decode_stats ORDER BY name;

-- Q: IMC trace records per CPU and privilege (0 guest kernel, 1 guest user, 2 kernel, 3 user), with their time span
SELECT cpu, privilege, count(*) AS records, min(time) AS first, max(time) AS last, sum(time_estimated) AS estimated
FROM imc_records GROUP BY cpu, privilege ORDER BY cpu, privilege;

-- Q: IMC counter rates per interval (count scaled by enabled / running, per second)
SELECT e.name, c.cpu, c.time,
       (c.value - p.value) * 1.0 * (c.enabled - p.enabled) / max(c.running - p.running, 1)
         / max((c.time - p.time) / 1e9, 1e-9) AS per_second
FROM imc_counters c
JOIN imc_counters p ON p.evsel_id = c.evsel_id AND p.cpu = c.cpu AND p.tid = c.tid
     AND p.time = (SELECT max(time) FROM imc_counters q WHERE q.evsel_id = c.evsel_id AND q.cpu = c.cpu
                   AND q.tid = c.tid AND q.time < c.time)
JOIN selected_events e ON e.id = c.evsel_id
ORDER BY e.name, c.cpu, c.time;
