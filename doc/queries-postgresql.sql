-- Example queries over a PostgreSQL database that rbdecode loaded many recordings into
-- (rbdecode FILE -o postgresql://...; also run by tests/postgresql.test). Every table and
-- view has recording_id first; ids are per recording, so joins match recording_id too.
-- Each query is preceded by a comment line starting with "-- Q:" naming it.

-- Q: the recordings: from which machine, when, with which perf, and how big
SELECT r.id, r.host_name, r.arch, r.perf_version, r.recorded_at, r.loaded_at, r.path,
       (SELECT count(*) FROM samples s WHERE s.recording_id = r.id AND s.id > 0) AS samples,
       (SELECT count(*) FROM gaps g WHERE g.recording_id = r.id AND g.id > 0) AS gaps
FROM recordings r ORDER BY r.id;

-- Q: top functions per host by self time (hardware trace: call_path_stats, every mode)
SELECT host_name, name, dso, self_time, calls
FROM (SELECT r.host_name, f.name, f.dso, sum(f.self_time) AS self_time, sum(f.calls) AS calls,
             rank() OVER (PARTITION BY r.host_name ORDER BY sum(f.self_time) DESC) AS rank
      FROM function_stats f JOIN recordings r ON r.id = f.recording_id
      GROUP BY r.host_name, f.name, f.dso) t
WHERE rank <= 5 ORDER BY host_name, self_time DESC;

-- Q: top functions per host by samples (recorded samples and, with --itrace=b, trace branches)
SELECT host_name, symbol, samples
FROM (SELECT r.host_name, s.symbol, count(*) AS samples,
             rank() OVER (PARTITION BY r.host_name ORDER BY count(*) DESC) AS rank
      FROM samples_view s JOIN recordings r ON r.id = s.recording_id
      WHERE s.id > 0 GROUP BY r.host_name, s.symbol) t
WHERE rank <= 5 ORDER BY host_name, samples DESC;

-- Q: one function compared across recordings: calls and mean time per call
SELECT f.recording_id, r.host_name, r.path, f.calls, f.total_time_all_levels,
       round(f.total_time_all_levels::numeric / nullif(f.calls, 0), 1) AS ns_per_call
FROM function_stats f JOIN recordings r ON r.id = f.recording_id
WHERE f.name = (SELECT name FROM function_stats GROUP BY name ORDER BY count(DISTINCT recording_id) DESC, name LIMIT 1)
ORDER BY f.recording_id;

-- Q: how complete is each recording's trace: losses by reason
SELECT r.host_name, g.recording_id, g.reason, count(*) AS losses, sum(g.bytes_lost) AS bytes_lost
FROM gaps g JOIN recordings r ON r.id = g.recording_id
WHERE g.id > 0 GROUP BY r.host_name, g.recording_id, g.reason ORDER BY g.recording_id, losses DESC;

-- Q: recordings whose decode was partial (decode_stats, one row per name per recording)
SELECT r.id, r.path, d.value AS partial
FROM recordings r JOIN decode_stats d ON d.recording_id = r.id AND d.name = 'partial'
ORDER BY r.id;

-- Q: slowest calls of every recording loaded with --calls
SELECT recording_id, command, symbol, elapsed_time
FROM (SELECT c.*, rank() OVER (PARTITION BY recording_id ORDER BY elapsed_time DESC) AS rank
      FROM calls_view c WHERE c.id > 0) t
WHERE rank <= 3 ORDER BY recording_id, elapsed_time DESC;
