-- Example queries over the rbtrace extension's lazy tables (doc/schema.md), in a database rbdecode
-- made from a hardware-trace recording; also run by tests/rbtrace.test. Load the extension first:
--   sqlite3 out.db '.load /usr/local/lib/rbdecode/rbtrace'
-- Each query is preceded by a comment line starting with "-- Q:" naming it.

-- Q: branches in the first millisecond of CPU 0's trace
SELECT count(*) AS branches, min(time), max(time) FROM branches
WHERE cpu = 0 AND time BETWEEN (SELECT min(time) FROM trace_index WHERE cpu = 0)
                           AND (SELECT min(time) FROM trace_index WHERE cpu = 0) + 1000000;

-- Q: the hottest edges of that millisecond, by name
SELECT f.name AS from_symbol, t.name AS to_symbol, bt.name AS kind, count(*) AS n
FROM branches b JOIN symbols f ON f.id = b.symbol_id JOIN symbols t ON t.id = b.to_symbol_id
JOIN branch_types bt ON bt.id = b.branch_type
WHERE b.time BETWEEN (SELECT min(time) FROM trace_index) AND (SELECT min(time) FROM trace_index) + 1000000
GROUP BY 1, 2, 3 ORDER BY n DESC LIMIT 10;

-- Q: one thread's branches in a window, with objects and symbols
SELECT b.time, b.cpu, d.short_name, s.name, b.sym_offset, printf('%x', b.to_ip) AS to_ip
FROM branches b JOIN dsos d ON d.id = b.dso_id LEFT JOIN symbols s ON s.id = b.symbol_id
WHERE b.tid = (SELECT tid FROM trace_index WHERE tid > 0 LIMIT 1)
  AND b.time >= (SELECT min(time) FROM trace_index) LIMIT 50;

-- Q: the slowest calls, with their functions (lazy calls where the database stores none)
SELECT c.id, s.name, c.tid, c.return_time - c.call_time AS ns, c.branch_count
FROM calls c JOIN call_paths p ON p.id = c.call_path_id LEFT JOIN symbols s ON s.id = p.symbol_id
WHERE c.id > 0 ORDER BY ns DESC LIMIT 10;
