#!/usr/bin/env python3
"""Move sim/'s flat modules into layer folders (issue 29 item 1), and rewrite every path.

The layers and their modules are sim/layers.txt (tests/it/layers.rs checks the same table).
For each top-level module `m` of layer `L` (sim/m.rs and/or sim/m/):
  - a module named like its layer hosts it: sim/L.rs becomes sim/L/mod.rs (sim/L/ stays), and
    the layer's other modules become its children; `crate::L` keeps its meaning;
  - otherwise the module moves to sim/L/m.rs (sim/L/m/) and sim/L/mod.rs declares it;
  - `crate::m` becomes `crate::L::m` everywhere in sim/ (grouped `use crate::{m::X, n}` too),
    `rehearsal::m` in tests/, benches/ and sim/main.rs, `super::m` reaching the crate root from
    a moved top-level file, and `sim/m.rs` / `sim/m/` in comments and docs;
  - include_str!/include_bytes! paths are recomputed from the file's new place; files a
    module includes from sim/ (sim/m.toml) move with it; `pub(super)` in a moved top-level
    file becomes `pub(crate)` (its parent was the crate root).
Rule-based, not a list of edits: it works on code others changed, as long as every module is
in sim/layers.txt (it stops, naming the ones that are not, before it touches anything).
Idempotent: a module already in its layer folder is left alone, and a second run changes
nothing. git mv is used when the tree is a git checkout, so history follows the files.

Usage: python3 scripts/relayout.py [--dry-run] [ROOT]   (ROOT: the checkout, default .)
Then: cargo fmt && cargo check --all-targets && cargo test --test it golden layers
"""

import os
import re
import subprocess
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def read_layers(root):
    layers = []  # [(layer, [modules])], lowest first
    with open(os.path.join(root, "sim", "layers.txt")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            layer, mods = line.split(":", 1)
            layers.append((layer.strip(), mods.split()))
    return layers


def top_modules(sim):
    mods = set()
    for e in os.listdir(sim):
        p = os.path.join(sim, e)
        if e.endswith(".rs") and e not in ("lib.rs", "main.rs"):
            mods.add(e[:-3])
        elif os.path.isdir(p) and (os.path.exists(os.path.join(p, "mod.rs")) or os.path.exists(p + ".rs")):
            mods.add(e)
    return mods


def move(root, src, dst, git):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if git:
        subprocess.check_call(["git", "mv", src, dst], cwd=root)
    else:
        os.rename(os.path.join(root, src), os.path.join(root, dst))


def rewrite_group(body, rename):
    """The inside of `crate::{…}`: rename each top-level item's first segment."""
    out, depth, item = [], 0, ""
    for ch in body + ",":
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            m = re.match(r"(\s*)(" + IDENT + r")(.*)", item, re.S)
            if m and m.group(2) in rename:
                item = m.group(1) + rename[m.group(2)] + m.group(3)
            out.append(item)
            item = ""
        else:
            item += ch
    return ",".join(out)


def rewrite_paths(text, prefix, rename):
    """`prefix::m` → `prefix::L::m` (word-bounded, not already moved), grouped uses too."""
    def plain(m):
        name = m.group(2)
        return m.group(1) + rename[name] if name in rename else m.group(0)

    text = re.sub(r"((?<![A-Za-z0-9_$])" + prefix + r"::)(" + IDENT + r")\b(?!!)", plain, text)
    out, i = [], 0
    pat = re.compile(r"(?<![A-Za-z0-9_$])" + prefix + r"::\{")
    while True:
        m = pat.search(text, i)
        if not m:
            out.append(text[i:])
            break
        j, depth = m.end(), 1
        while depth and j < len(text):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        out.append(text[i:m.end()])
        out.append(rewrite_group(text[m.end():j - 1], rename))
        out.append("}")
        i = j
    return "".join(out)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    dry = "--dry-run" in sys.argv
    root = os.path.abspath(args[0] if args else ".")
    sim = os.path.join(root, "sim")
    git = os.path.isdir(os.path.join(root, ".git")) or os.path.isfile(os.path.join(root, ".git"))
    layers = read_layers(root)
    layer_of = {}
    for layer, mods in layers:
        for m in mods:
            if m in layer_of and layer_of[m] != layer:
                sys.exit(f"sim/layers.txt: {m} is in two layers")
            layer_of[m] = layer
    layer_names = {l for l, _ in layers}
    present = top_modules(sim)
    # Already laid out: a layer folder (not a hosting module of the same name) is no module.
    movable = {m for m in present if m not in layer_names or m in layer_of}
    unplaced = sorted(m for m in present - layer_names if m not in layer_of)
    if unplaced:
        sys.exit("modules in no layer of sim/layers.txt (add each to its layer, then run again): " + " ".join(unplaced))
    # What moves: every present module whose layer is not itself.
    moving = sorted(m for m in movable if layer_of.get(m) and layer_of[m] != m and m not in layer_names)
    rename = {m: f"{layer_of[m]}::{m}" for m in moving}
    if not moving:
        print("relayout: every module is in its layer folder already; nothing to do")
        return
    for m in moving:
        print(f"relayout: {m} -> {layer_of[m]}/{m}")
    # A layer folder that is already a module (a host) must not have a child of a moving
    # module's name: stop before touching anything.
    clashes = [f"sim/{layer_of[m]}/{m}" for m in moving if os.path.exists(os.path.join(sim, layer_of[m], m + ".rs")) or os.path.isdir(os.path.join(sim, layer_of[m], m))]
    if clashes:
        sys.exit("relayout: these already exist, rename the module or its layer's child first: " + " ".join(clashes))
    if dry:
        return

    # 1. Files, before any rewrite: remember where each moved file came from.
    moved_from = {}  # new relative path -> old relative path (for include paths)
    includes_moving = {}  # sim/x.ext included by a moving module's top file -> its layer
    for m in moving:
        top = os.path.join(sim, m + ".rs")
        if os.path.exists(top):
            for inc in re.findall(r'include_(?:str|bytes)!\("([^"]+)"\)', open(top).read()):
                target = os.path.normpath(os.path.join(sim, inc))
                if os.path.dirname(target) == sim and not target.endswith(".rs"):
                    includes_moving[target] = layer_of[m]
    hosts = {l for l in layer_names if l in present}
    for layer, _ in layers:
        if layer in hosts and os.path.exists(os.path.join(sim, layer + ".rs")):
            os.makedirs(os.path.join(sim, layer), exist_ok=True)
            move(root, f"sim/{layer}.rs", f"sim/{layer}/mod.rs", git)
            moved_from[f"sim/{layer}/mod.rs"] = f"sim/{layer}.rs"
    for m in moving:
        layer = layer_of[m]
        if os.path.exists(os.path.join(sim, m + ".rs")):
            move(root, f"sim/{m}.rs", f"sim/{layer}/{m}.rs", git)
            moved_from[f"sim/{layer}/{m}.rs"] = f"sim/{m}.rs"
        if os.path.isdir(os.path.join(sim, m)):
            old_files = [os.path.relpath(os.path.join(r, f), root) for r, _, fs in os.walk(os.path.join(sim, m)) for f in fs]
            move(root, f"sim/{m}", f"sim/{layer}/{m}", git)
            for old in old_files:
                moved_from["sim/" + layer + "/" + os.path.relpath(old, "sim")] = old
    for target, layer in includes_moving.items():
        rel = os.path.relpath(target, root)
        new = f"sim/{layer}/{os.path.basename(target)}"
        move(root, rel, new, git)

    # 2. lib.rs and the layers' mod.rs.
    lib_path = os.path.join(sim, "lib.rs")
    lib = open(lib_path).read()
    for m in moving:
        lib = re.sub(r"(?m)^((?:#\[[^\n]*\]\n|///[^\n]*\n)*)(?:pub(?:\([a-z]+\))? )?mod " + m + r";\n", "", lib)
    # The `pub mod` lines: the modules left at the top and the layer folders, in layer order.
    order = [l for l, _ in layers]
    names = set(re.findall(r"(?m)^pub mod (" + IDENT + r");", lib))
    names |= {l for l in order if os.path.isdir(os.path.join(sim, l))}
    first = lib.index("pub mod ")
    rest = re.sub(r"(?m)^pub mod " + IDENT + r";\n", "", lib[first:])
    ranked = sorted(names, key=lambda n: (order.index(n) if n in order else len(order), n))
    lib = lib[:first] + "".join(f"pub mod {n};\n" for n in ranked) + rest
    open(lib_path, "w").write(lib)
    for layer, mods in layers:
        folder = os.path.join(sim, layer)
        children = [m for m in mods if m != layer and (os.path.exists(os.path.join(folder, m + ".rs")) or os.path.isdir(os.path.join(folder, m)))]
        if not children:
            continue
        mod_rs = os.path.join(folder, "mod.rs")
        text = open(mod_rs).read() if os.path.exists(mod_rs) else ""
        if not text:
            text = f"//! The {layer} layer (sim/layers.txt, ARCHITECTURE.md \"Layers\").\n\n"
        have = set(re.findall(r"(?m)^\s*(?:pub(?:\([a-z]+\))? )?mod (" + IDENT + r")\s*;", text))
        new = [f"pub mod {m};\n" for m in children if m not in have]
        if new:
            lines = text.split("\n")
            # After the leading `//!` docs (and a blank line), before anything else.
            k = 0
            while k < len(lines) and lines[k].startswith("//!"):
                k += 1
            head, tail = "\n".join(lines[:k]), "\n".join(lines[k:]).lstrip("\n")
            text = (head + "\n\n" if head else "") + "".join(new) + ("\n" + tail if tail else "")
            open(mod_rs, "w").write(text)

    # 3. Paths in every source and text file.
    def files(dirs, exts):
        for d in dirs:
            for r, ds, fs in os.walk(os.path.join(root, d)):
                ds[:] = [x for x in ds if x not in ("target", ".git")]
                for f in fs:
                    if f.endswith(exts):
                        yield os.path.join(r, f)

    for path in files(["sim"], (".rs",)):
        rel = os.path.relpath(path, root)
        text = open(path).read()
        new = rewrite_paths(text, "crate", rename)
        old_rel = moved_from.get(rel)
        if old_rel:
            new = fix_super(new, old_rel, rename)
            new = fix_includes(new, root, old_rel, rel, includes_moving)
        if rel == "sim/main.rs":
            new = rewrite_paths(new, "rehearsal", rename)
        if new != text:
            open(path, "w").write(new)
    for path in files(["tests", "benches", "examples"], (".rs",)):
        text = open(path).read()
        new = rewrite_paths(text, "rehearsal", rename)
        if new != text:
            open(path, "w").write(new)
    # sim/m.rs and sim/m/ named in comments, docs and scripts.
    mentions = {}
    for m in moving:
        mentions[f"sim/{m}.rs"] = f"sim/{layer_of[m]}/{m}.rs"
        mentions[f"sim/{m}/"] = f"sim/{layer_of[m]}/{m}/"
    for layer in hosts:
        mentions[f"sim/{layer}.rs"] = f"sim/{layer}/mod.rs"
    pat = re.compile(r"(?<![A-Za-z0-9_/])(" + "|".join(re.escape(k) for k in sorted(mentions, key=len, reverse=True)) + r")(?![A-Za-z0-9_])")
    text_files = list(files(["sim", "tests", "benches", "docs", "scenarios", "scripts", ".github"], (".rs", ".md", ".toml", ".yml", ".yaml", ".sh", ".txt")))
    text_files += [os.path.join(root, f) for f in os.listdir(root) if f.endswith((".md", ".rs", ".toml"))]
    for path in text_files:
        if path.endswith("relayout.py"):
            continue
        text = open(path).read()
        new = pat.sub(lambda m: mentions[m.group(1)], text)
        if new != text:
            open(path, "w").write(new)
    # A host that imported a module now its child (`use crate::trace_codec;`) declares it.
    for layer in hosts:
        mod_rs = os.path.join(sim, layer, "mod.rs")
        text = open(mod_rs).read()
        children = "|".join(re.escape(m) for m in moving if layer_of[m] == layer) or "$^"
        new = re.sub(r"(?m)^(?:pub )?use crate::" + layer + r"::(?:" + children + r");\n", "", text)
        if new != text:
            open(mod_rs, "w").write(new)
    print(f"relayout: {len(moving)} modules moved into {len({layer_of[m] for m in moving})} layer folders")


def blank_comments_and_strings(src):
    """`src` with comments and string/char literals blanked (same length, newlines kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i)
            j = n if j < 0 else j + 2
        elif re.match(r'b?r#*"', src[i:i + 8]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'b?r(#*)"', src[i:])
            close = '"' + m.group(1)
            j = src.find(close, i + len(m.group(0)))
            j = n if j < 0 else j + len(close)
        elif src[i] == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j += 1
        else:
            m = re.match(r"'(\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'", src[i:i + 12])
            if not m:
                out.append(src[i])
                i += 1
                continue
            j = i + len(m.group(0))
        out.append(re.sub(r"[^\n]", " ", src[i:j]))
        i = j
    return "".join(out)


def inline_mod_depth(text):
    """For each offset of `text`, how many inline `mod x { … }` blocks enclose it."""
    code = blank_comments_and_strings(text)
    depth = [0] * (len(code) + 1)
    for m in re.finditer(r"\bmod\s+" + IDENT + r"\s*\{", code):
        j, d = m.end(), 1
        while d and j < len(code):
            d += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        for k in range(m.end(), j):
            depth[k] += 1
    return depth


def fix_super(text, old_rel, rename):
    """In a moved file, a `super::…::x` chain that climbed to the crate root names `crate::…`
    now; a top-level file's `pub(super)` (the crate) says `pub(crate)`."""
    parts = old_rel.split("/")[1:]  # below sim/
    mod_depth = len(parts) - (1 if parts[-1] == "mod.rs" else 0)
    inline = inline_mod_depth(text)

    def climb(m):
        if m.group(0).count("super::") != mod_depth + inline[m.start()]:
            return m.group(0)
        return "crate::" + rename.get(m.group(1), m.group(1))

    text2 = re.sub(r"(?<![A-Za-z0-9_:])(?:super::)+(" + IDENT + r")", climb, text)
    if mod_depth == 1:
        inline = inline_mod_depth(text2)
        text2 = re.sub(r"pub\(super\)", lambda m: "pub(crate)" if inline[m.start()] == 0 else m.group(0), text2)
    return text2


def fix_includes(text, root, old_rel, new_rel, includes_moving):
    def repl(m):
        target = os.path.normpath(os.path.join(root, os.path.dirname(old_rel), m.group(2)))
        if target in includes_moving:
            target = os.path.join(root, "sim", includes_moving[target], os.path.basename(target))
        rel = os.path.relpath(target, os.path.join(root, os.path.dirname(new_rel)))
        return f'{m.group(1)}("{rel}")'

    return re.sub(r'(include_(?:str|bytes)!)\("([^"]+)"\)', repl, text)


if __name__ == "__main__":
    main()
