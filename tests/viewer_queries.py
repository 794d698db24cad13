#!/usr/bin/python3
"""viewer_queries.py [--no-cpu] VIEWER PERF_DB OURS_DB - the reports of perf's
exported-sql-viewer.py (its own code and SQL, loaded from VIEWER, without a
window) on both databases: the call graph and the call tree (every level,
opened as a user would open each row), the branch list of the branches event
and the top calls. Rows are compared by value, and ids are never compared;
the columns of times and of instruction/cycle counts are left out, as
dbcompare.py --rank --no-ipc leaves them out (see tests/export_pt.test). The
branch list and the top calls are compared as sorted rows; --no-cpu leaves
out the branch list's CPU (a trace recorded per thread, see dbcompare.py). Prints one line
per report, 'same N' or 'DIFF'; exits 1 if any differs, 2 if the viewer
could not be loaded or a query failed.
"""
import importlib.util, os, sqlite3, sys

no_cpu = "--no-cpu" in sys.argv
args = [a for a in sys.argv[1:] if a != "--no-cpu"]
viewer, dbs = args[0], args[1:3]
sys.path.insert(0, os.path.dirname(viewer))        # its libxed.py
sys.argv = [viewer]
spec = importlib.util.spec_from_file_location("exported_sql_viewer", viewer)
v = importlib.util.module_from_spec(spec)
spec.loader.exec_module(v)
app = v.QCoreApplication([])

captured = []

class Fetcher(v.QObject):
    """stands in for the viewer's SQLFetcher (a process writing to shared memory): keeps the SQL"""
    done = v.Signal(object)
    def __init__(self, glb, sql, prep, process_data, parent=None):
        super().__init__(parent)
        captured.append(sql)
    def Fetch(self, n):
        pass

v.SQLFetcher = Fetcher

def kept(model, n):
    return [c for c in range(n) if not any(w in model.columnHeader(c) for w in ("Time", "Insn", "Cyc", "IPC"))]

def walk(model, item, cols, path, out):
    n = item.childCount()
    for r in range(max(n, 0)):
        child = item.getChildItem(r)
        row = tuple(child.getData(c) for c in cols)
        out.append(path + row)
        walk(model, child, cols, path + (row[0],), out)

def reports(path, n):
    db = v.QSqlDatabase.addDatabase("QSQLITE", "db%d" % n)
    db.setDatabaseName(path)
    if not db.open():
        raise Exception("cannot open " + path)
    glb = v.Glb(v.DBRef(True, path), db, path)
    out = {}
    for name, cls in (("call graph", v.CallGraphModel), ("call tree", v.CallTreeModel)):
        m = cls(glb)
        rows = []
        walk(m, m.root, kept(m, m.columnCount()), (), rows)
        out[name] = rows
    # the branch list of the branches event (without id, time and the IPC columns), and the top calls
    del captured[:]
    c = sqlite3.connect(path)
    event = c.execute("SELECT id FROM selected_events WHERE name LIKE 'branches%'").fetchone()[0]
    v.BranchModel(glb, event, "")
    v.TopCallsModel(glb, v.ReportVars("top calls", "", ""))
    br = [r[3 if no_cpu else 2:16] for r in c.execute(captured[0].replace("$$last_id$$", "0").replace(" LIMIT %d" % v.glb_chunk_sz, ""))]
    out["branches"] = sorted(br, key=repr)
    top = [r[:5] + r[8:] for r in c.execute(captured[1])]
    out["top calls"] = sorted(top, key=repr)
    return out

try:
    a, b = reports(dbs[0], 0), reports(dbs[1], 1)
except Exception as e:
    print("viewer failed: %s" % e)
    sys.exit(2)
bad = 0
for name in a:
    if a[name] == b[name] and a[name]:
        print("%-12s same %d" % (name, len(a[name])))
        continue
    bad += 1
    print("%-12s DIFF perf %d rows, ours %d rows" % (name, len(a[name]), len(b[name])))
    if os.environ.get("VIEWER_DUMP"):
        for r in a[name]: print("   perf: %.200s" % (r,))
        for r in b[name]: print("   ours: %.200s" % (r,))
    sa, sb = set(a[name]), set(b[name])
    for r in sorted(sa - sb, key=repr)[:3]:
        print("   perf only: %.300s" % (r,))
    for r in sorted(sb - sa, key=repr)[:3]:
        print("   ours only: %.300s" % (r,))
sys.exit(1 if bad else 0)
