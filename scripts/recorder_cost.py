#!/usr/bin/env python3
"""What the history recorder costs a writer (README "Judge a real deployment"): the hold time
of the write lock for one protocol write (BEGIN IMMEDIATE .. COMMIT around the statement, as an
autocommit statement holds it), on two WAL comms.db files side by side, one with the recorder
(scenarios/recorder/install.sql) and one without, alternating statement by statement so the
machine's load falls on both alike.

  python3 scripts/recorder_cost.py [N] [synchronous]      # defaults: 2000 NORMAL

A heartbeat in the same second as the row's last one changes no byte: without the recorder
SQLite then writes no page (the commit is nearly free); with it, every write appends a history
row. `set_error` changes its row every time.
"""
import os
import sqlite3
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
SYNC = sys.argv[2] if len(sys.argv) > 2 else "NORMAL"
STATEMENTS = {
    "heartbeat": "UPDATE orchestration_tasks SET last_heartbeat = datetime('now') WHERE task_id = 'task-01'",
    "set_error": "UPDATE orchestration_tasks SET state = 'error', retry_count = retry_count + 1, last_error = 'x', last_heartbeat = datetime('now') WHERE task_id = 'task-02'",
    "send_error": "INSERT INTO orchestration_messages (task_id, from_session, message, message_type) VALUES ('task-01', 's1', 'ERROR: x', 'error')",
}


def make(path, recorded):
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = %s" % SYNC)
    conn.executescript(open(os.path.join(ROOT, "scenarios", "schema.sql")).read())
    for i in range(1, 9):
        conn.execute("INSERT INTO orchestration_tasks (task_id, state, session_id) VALUES ('task-%02d', 'working', 's%d')" % (i, i))
    if recorded:
        script = open(os.path.join(ROOT, "scenarios", "recorder", "install.sql")).read()
        conn.executescript("\n".join(l for l in script.splitlines() if not l.startswith(".")))
        conn.execute("CREATE TEMP TRIGGER IF NOT EXISTS rehearsal_writer AFTER INSERT ON main.rehearsal_history "
                     "BEGIN INSERT OR IGNORE INTO rehearsal_writers (seq, writer) VALUES (new.seq, 's1'); END;")
    return conn


def hold(conn, sql):
    start = time.perf_counter_ns()
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(sql)
    conn.execute("COMMIT")
    return (time.perf_counter_ns() - start) / 1000.0


def main():
    with tempfile.TemporaryDirectory() as d:
        plain, recorded = make(os.path.join(d, "plain.db"), False), make(os.path.join(d, "recorded.db"), True)
        print("synchronous=%s, %d writes of each statement on each file, alternating" % (SYNC, N))
        for name, sql in STATEMENTS.items():
            times = {"plain": [], "recorded": []}
            for _ in range(N):
                times["plain"].append(hold(plain, sql))
                times["recorded"].append(hold(recorded, sql))
            p50 = {k: statistics.median(v) for k, v in times.items()}
            p90 = {k: sorted(v)[int(len(v) * 0.9)] for k, v in times.items()}
            print("%-10s hold p50 %7.1f us -> %7.1f us (%.2fx)   p90 %7.1f us -> %7.1f us (%.2fx)" % (
                name, p50["plain"], p50["recorded"], p50["recorded"] / p50["plain"],
                p90["plain"], p90["recorded"], p90["recorded"] / p90["plain"]))


if __name__ == "__main__":
    main()
