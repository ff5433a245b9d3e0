#!/usr/bin/env python3
"""A real fleet on one comms.db (issue 40; tests/it/real_fleet.rs): a conductor and musician
sessions as separate OS processes, each with its own SQLite connection, running the protocol's
statements from scenarios/protocol.sql by name, with time compressed (heartbeats every 0.1 s,
a session is stale after STALE_S seconds instead of 540). Not rehearsal's actors: a small
deployment, as a real one would run the seeds' SQL.

  fleet.py drive --db DB --log LOG --mode clean|faulty --rehearsal BIN --tasks N

`drive` creates DB (seed 004's schema, WAL), starts the conductor, installs the recorder with
`BIN record install DB` while the conductor writes, and in `faulty` mode injects the faults:
task-01's first session stops itself (SIGSTOP, between two statements) once it has claimed and
is resumed (SIGCONT) after its successor claimed; task-02's first session is killed (SIGKILL) once it has claimed. Every
process appends what it did to LOG, one JSON object a line: each write with the wall-clock
instants just before and after it, each signal with its instant."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STALE_S = 3.0
BEAT_S = 0.1
WORK_STEPS = 25


def now_text():
    t = time.time()
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t)) + ".%03d" % int((t % 1) * 1000)


def log(path, **entry):
    entry.setdefault("at", now_text())
    entry["pid"] = os.getpid()
    line = (json.dumps(entry, sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def statements():
    """scenarios/protocol.sql by `-- name:`."""
    found, name, lines = {}, None, []
    with open(os.path.join(ROOT, "scenarios", "protocol.sql")) as f:
        for line in f:
            if line.startswith("-- name: "):
                if name:
                    found[name] = "".join(lines)
                name, lines = line[len("-- name: "):].strip(), []
            elif not line.startswith("--"):
                lines.append(line)
    if name:
        found[name] = "".join(lines)
    return found


class Session:
    """One process's connection: autocommit (each statement its own transaction, as the seeds'
    sqlite3 calls), a busy timeout, and the recorder's identity statement once it can run."""

    def __init__(self, db, log_path, session_id, role):
        self.conn = sqlite3.connect(db, isolation_level=None, timeout=10)
        self.sql = statements()
        self.log_path, self.session_id, self.role = log_path, session_id, role
        self.identified = False

    def identify(self):
        # README "Judge a real deployment": the one statement that names this connection's writer.
        if self.identified:
            return
        quoted = self.session_id.replace("'", "''")
        try:
            self.conn.execute(
                "CREATE TEMP TRIGGER IF NOT EXISTS rehearsal_writer AFTER INSERT ON main.rehearsal_history "
                "BEGIN INSERT OR IGNORE INTO rehearsal_writers (seq, writer) VALUES (new.seq, '%s'); END;" % quoted)
            self.identified = True
        except sqlite3.OperationalError:
            pass  # the recorder is not installed yet: its SNAPSHOT will show what this writes

    def read(self, name, **params):
        return self.conn.execute(self.sql[name], params).fetchall()

    def write(self, name, task, **params):
        self.identify()
        before = now_text()
        rows = self.conn.execute(self.sql[name], params).rowcount
        log(self.log_path, event="write", session=self.session_id, role=self.role, stmt=name, task=task,
            rows=rows, before=before, after=now_text(), identified=self.identified)
        return rows


def musician(db, log_path, task, session_id):
    s = Session(db, log_path, session_id, "musician")
    if s.write("claim_task", task, task_id=task, session_id=session_id, worked_by="musician-" + session_id) == 0:
        s.write("insert_fallback_row", task, session_id=session_id)
        return
    log(log_path, event="claimed", session=session_id, task=task)
    if os.path.exists("%s.stop-%s" % (db, session_id)):
        # The fault: this process is stopped between two statements (as an OS suspends it),
        # never inside a transaction: a process stopped holding the write lock would stop
        # every writer of the file (the busy timeout then fails them all), another fault.
        log(log_path, event="sigstop", session=session_id, task=task)
        os.kill(os.getpid(), signal.SIGSTOP)
        log(log_path, event="resumed", session=session_id, task=task)
    s.read("read_instruction", task_id=task)
    for _ in range(WORK_STEPS):
        s.write("heartbeat", task, task_id=task)
        time.sleep(BEAT_S)
    s.write("send_review_request", task, task_id=task, session_id=session_id, message="REVIEW REQUEST: " + task)
    s.write("set_needs_review", task, task_id=task)
    deadline = time.time() + 30
    while time.time() < deadline:
        state = s.read("read_task_state", task_id=task)[0][0]
        if state == "review_approved":
            break
        if state not in ("needs_review", "reviewing"):
            log(log_path, event="gave_up", session=session_id, task=task, state=state)
            return
        s.write("heartbeat", task, task_id=task)
        time.sleep(BEAT_S)
    s.write("resume_working", task, task_id=task)
    s.write("send_completion", task, task_id=task, session_id=session_id, message="COMPLETION: " + task)
    s.write("mark_complete", task, task_id=task, report_path="reports/%s.md" % task)
    log(log_path, event="ended", session=session_id, task=task)


def launch(db, log_path, task, n):
    session_id = "%s-S%d" % (task, n)
    p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "musician", db, log_path, task, session_id])
    log(log_path, event="launched", session=session_id, task=task, child=p.pid)
    return p


def conductor(db, log_path, tasks):
    s = Session(db, log_path, "conductor-session", "conductor")
    s.write("conductor_register", "task-00", session_id="conductor-session")
    ids = ["task-%02d" % (i + 1) for i in range(tasks)]
    for task in ids:
        s.write("create_task", task, task_id=task, instruction_path="plans/%s.md" % task)
        s.write("send_instruction", task, task_id=task, message="INSTRUCTION: plans/%s.md" % task)
    children, sessions = [], {task: 1 for task in ids}
    for task in ids:
        children.append(launch(db, log_path, task, 1))
    deadline = time.time() + 90
    while time.time() < deadline:
        s.write("conductor_heartbeat", "task-00")
        rows = s.read("poll_tasks")
        if rows and all(r[1] == "complete" for r in rows):
            break
        for task, state, _beat, stale, _session, _retry in rows:
            if state == "needs_review":
                s.write("send_conductor_message", task, task_id=task, message="APPROVED", message_type="approval")
                s.write("set_task_state", task, task_id=task, state="review_approved")
            elif state in ("working", "needs_review") and stale is not None and stale > STALE_S:
                log(log_path, event="stale", task=task, stale=stale)
                s.write("send_conductor_message", task, task_id=task, message="HANDOFF: stale", message_type="handoff")
                s.write("set_task_state", task, task_id=task, state="fix_proposed")
                sessions[task] += 1
                children.append(launch(db, log_path, task, sessions[task]))
        time.sleep(BEAT_S)
    s.write("conductor_set_state", "task-00", state="complete")
    log(log_path, event="conductor_exit")
    for child in children:
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass


def claimed_pid(log_path, session_id):
    """The pid of a launched session once it has claimed (from LOG), else None."""
    pid, claimed = None, False
    with open(log_path) as f:
        for line in f:
            e = json.loads(line)
            if e.get("session") == session_id and e["event"] == "launched":
                pid = e["child"]
            if e.get("session") == session_id and e["event"] == "claimed":
                claimed = True
    return pid if claimed else None


def wait_for(what, timeout_s=60):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        value = what()
        if value:
            return value
        time.sleep(0.02)
    raise SystemExit("fleet.py: timed out waiting")


def drive(db, log_path, mode, rehearsal, tasks):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    with open(os.path.join(ROOT, "scenarios", "schema.sql")) as f:
        conn.executescript(f.read())
    conn.close()
    if mode == "faulty":
        open(db + ".stop-task-01-S1", "w").close()
    c = subprocess.Popen([sys.executable, os.path.abspath(__file__), "conductor", db, log_path, str(tasks)])
    # The recorder goes into a database that the conductor is writing.
    time.sleep(0.05)
    out = subprocess.run([rehearsal, "record", "install", db], capture_output=True, text=True)
    log(log_path, event="recorder_installed", code=out.returncode, stderr=out.stderr)
    if out.returncode != 0:
        raise SystemExit("fleet.py: record install failed: " + out.stderr)
    if mode == "faulty":
        zombie = wait_for(lambda: claimed_pid(log_path, "task-01-S1"))
        killed = wait_for(lambda: claimed_pid(log_path, "task-02-S1"))
        os.kill(killed, signal.SIGKILL)
        log(log_path, event="sigkill", session="task-02-S1", child=killed)
        wait_for(lambda: claimed_pid(log_path, "task-01-S2"))
        os.kill(zombie, signal.SIGCONT)
        log(log_path, event="sigcont", session="task-01-S1", child=zombie)
    c.wait(timeout=120)


def main(argv):
    if argv[0] == "musician":
        musician(*argv[1:5])
    elif argv[0] == "conductor":
        conductor(argv[1], argv[2], int(argv[3]))
    elif argv[0] == "drive":
        opts = dict(zip(argv[1::2], argv[2::2]))
        drive(opts["--db"], opts["--log"], opts["--mode"], opts["--rehearsal"], int(opts.get("--tasks", "3")))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
