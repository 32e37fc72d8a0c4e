#!/usr/bin/env python3
"""What the compiler made of Strata's kernels, checked without a GPU.

Reads the device code of the given object files (an nvcc build) with the CUDA toolkit's cuobjdump
(and nvdisasm, which `cuobjdump -sass` runs): for every kernel, its registers, shared memory and
local memory (spills and local arrays; resource usage), and the width of every global load and
store in its disassembly. Prints one line per kernel, then fails when

  * ptxas reports spills for a kernel (ptxas -v run again on the PTX the object embeds), or the
    kernel uses local memory (an array indexed at run time); a stack frame for calls (the slow
    paths of IEEE division) is reported, not failed;
  * fewer blocks of its launch size fit on a multiprocessor than the launch geometry assumes
    (kThreads of kernels/cuda/cuda_kernels.h; kMinBlocksPerSm there for the grid-stride kernels,
    kPeerMinBlocksPerSm of kernels/cuda/peer_collectives.h for the peer collective kernel), from
    its registers and shared memory with sm_90's allocation rules;
  * a vector kernel's main loops (for every 128-bit global store, the innermost loop of the
    disassembly around it) issue a global load or store narrower than 128 bits, or it has none.

  check_kernels.py --source-dir REPOSITORY [--find-tools cuda_tools.sh] OBJECT...

cuobjdump and nvdisasm are found on PATH, or in the directory --find-tools prints
(tests/compiler/cuda_tools.sh fetches them from the Python registry's CUDA packages when the
toolkit lacks them).
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

# sm_90 (H100): per multiprocessor.
REGISTERS_PER_SM = 65536
REGISTER_UNIT_PER_WARP = 256  # registers are allocated to warps in units of 256
MAX_WARPS_PER_SM = 64
MAX_BLOCKS_PER_SM = 32
SHARED_PER_SM = 228 * 1024
SHARED_RESERVED_PER_BLOCK = 1024


def run(args, cwd=None):
    done = subprocess.run(args, capture_output=True, text=True, cwd=cwd)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def header_constant(path, name):
    m = re.search(r"constexpr\s+unsigned\s+" + name + r"\s*=\s*(\d+)", open(path).read())
    if not m:
        sys.exit(f"{name} not found in {path}")
    return int(m.group(1))


# Which kernels assume how many resident blocks of kThreads per multiprocessor: (kernel name
# pattern, header, constant).
GEOMETRY = [
    (r"reduceKernel|countMismatchesKernel", "kernels/cuda/cuda_kernels.h", "kMinBlocksPerSm"),
    (r"peerCollectiveKernel", "kernels/cuda/peer_collectives.h", "kPeerMinBlocksPerSm"),
]


def demangle(names):
    if not names:
        return {}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
    return {n: (out[i] if i < len(out) and out[i] else n) for i, n in enumerate(names)}


def strip_parameters(name):
    """A demangled function name without its parameter list (the parenthesised tail)."""
    if not name.endswith(")"):
        return name
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(name[i], 0)
        if depth == 0:
            return name[:i]
    return name


def resource_usage(obj):
    """{mangled kernel: {REG, SHARED, LOCAL, STACK}} from cuobjdump --dump-resource-usage."""
    usage, current = {}, None
    for line in run(["cuobjdump", "--dump-resource-usage", obj]).splitlines():
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            current = m.group(1)
            continue
        if current and "REG:" in line:
            usage[current] = {k: int(v) for k, v in re.findall(r"(\w+)(?:\[\d+\])?:(\d+)", line)}
            current = None
    return usage


def sass_functions(obj):
    """{mangled kernel: [(address, instruction text)]} from cuobjdump -sass."""
    funcs, current = {}, None
    for line in run(["cuobjdump", "-sass", obj]).splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            current = m.group(1)
            funcs[current] = []
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if current and m:
            funcs[current].append((int(m.group(1), 16), m.group(2)))
    return funcs


def memory_width(instr):
    """'128', '64', '32' (plain), '16'/'8' (U16/S8...), or None for a non-global access."""
    m = re.search(r"\b(LDG|STG)((?:\.[A-Z0-9_]+)*)", instr)
    if not m:
        return None
    mods = m.group(2)
    for width in ("128", "64"):
        if "." + width in mods:
            return width
    if re.search(r"\.(U|S)(8|16)\b", mods):
        return re.search(r"\.(?:U|S)(8|16)\b", mods).group(1)
    return "32"


def vector_loops(instrs):
    """The loops that store 128 bits: for every 128-bit global store, the smallest backward-branch
    range holding it. Returns [(start, end, [widths of the global accesses inside])]."""
    loops = []
    for addr, text in instrs:
        m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", text)
        if m and int(m.group(1), 16) <= addr:
            loops.append((int(m.group(1), 16), addr))
    chosen = set()
    for addr, text in instrs:
        if text.split()[0:1] and "STG" in text and memory_width(text) == "128":
            around = [l for l in loops if l[0] <= addr <= l[1]]
            if around:
                chosen.add(min(around, key=lambda l: l[1] - l[0]))
    out = []
    for start, end in sorted(chosen):
        widths = [w for a, t in instrs if start <= a <= end for w in [memory_width(t)] if w]
        out.append((start, end, widths))
    return out


def ptxas_report(obj):
    """{mangled kernel: (spill store bytes, spill load bytes, stack frame bytes)}, from ptxas -v run
    on the PTX embedded in the object (the same ptxas and options nvcc used)."""
    import tempfile
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        run(["cuobjdump", "-xptx", "all", obj], cwd=tmp)
        for ptx in sorted(os.listdir(tmp)):
            arch = re.search(r"sm_(\d+)", ptx)
            if not ptx.endswith(".ptx") or not arch:
                continue
            done = subprocess.run(["ptxas", "-v", "-arch=sm_" + arch.group(1), "-o", os.devnull,
                                   os.path.join(tmp, ptx)], capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"ptxas on {ptx} failed:\n{done.stderr}")
            current = None
            for line in done.stderr.splitlines():
                m = re.search(r"Compiling entry function '(\S+)'", line)
                if m:
                    current = m.group(1)
                m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
                if m and current:
                    report[current] = (int(m.group(2)), int(m.group(3)), int(m.group(1)))
    return report


def resident_blocks(u, threads):
    warps = (threads + 31) // 32
    regs_per_warp = -(-u.get("REG", 0) * 32 // REGISTER_UNIT_PER_WARP) * REGISTER_UNIT_PER_WARP
    by_regs = (REGISTERS_PER_SM // regs_per_warp) // warps if regs_per_warp else MAX_BLOCKS_PER_SM
    by_warps = MAX_WARPS_PER_SM // warps
    shared = u.get("SHARED", 0) + SHARED_RESERVED_PER_BLOCK
    by_shared = SHARED_PER_SM // shared
    return min(by_regs, by_warps, by_shared, MAX_BLOCKS_PER_SM)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--find-tools", help="a script that prints the directory of cuobjdump and nvdisasm")
    ap.add_argument("--vector-kernels", default=r"reduceKernel|Collective",
                    help="kernels whose main loop must move 128 bits per access")
    ap.add_argument("objects", nargs="+")
    args = ap.parse_args()
    if args.find_tools:
        tools = run(["bash", args.find_tools]).strip()
        os.environ["PATH"] = tools + os.pathsep + os.environ["PATH"]
    threads = header_constant(os.path.join(args.source_dir, "kernels/cuda/cuda_kernels.h"), "kThreads")
    geometry = [(pattern, header_constant(os.path.join(args.source_dir, header), name), name)
                for pattern, header, name in GEOMETRY]

    failures, kernels = [], 0
    print(f"launch geometry (sm_90): blocks of {threads} threads; resident blocks per multiprocessor assumed: " +
          ", ".join(f"{name} = {n} ({pattern})" for pattern, n, name in geometry))
    print(f"{'kernel':<60} {'regs':>4} {'smem':>5} {'stack':>5} {'spill':>5} {'blocks/SM':>9}  "
          "vector loops: global accesses by width")
    def read(obj):  # the three tools per object, the objects on every core at once
        usage = resource_usage(obj)
        return usage, (sass_functions(obj) if usage else {}), (ptxas_report(obj) if usage else {})

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        reports = list(pool.map(read, args.objects))
    for usage, sass, spills in reports:
        names = demangle(sorted(usage))
        for mangled in sorted(usage):
            u, name = usage[mangled], names[mangled]
            short = strip_parameters(name.replace("(anonymous namespace)::", ""))
            short = re.sub(r"^(?:void )?|strata::cuda::", "", short)
            kernels += 1
            blocks = resident_blocks(u, threads)
            loops = vector_loops(sass.get(mangled, []))
            counts = {}
            for loop in loops:
                for w in loop[2]:
                    counts[w] = counts.get(w, 0) + 1
            mix = " ".join(f"{counts[w]}x{w}b" for w in sorted(counts, key=int, reverse=True)) or "-"
            spillStores, spillLoads, stack = spills.get(mangled, (-1, -1, -1))
            print(f"{short[:60]:<60} {u.get('REG', 0):>4} {u.get('SHARED', 0):>5} {stack:>5} "
                  f"{spillStores + spillLoads:>5} {blocks:>9}  {len(loops)} loops: {mix}")
            if spillStores != 0 or spillLoads != 0:
                failures.append(f"{short}: ptxas reports {spillStores} bytes of spill stores, {spillLoads} of spill "
                                "loads" if spillStores >= 0 else f"{short}: not in ptxas's report")
            if u.get("LOCAL", 0):
                failures.append(f"{short}: {u.get('LOCAL')} bytes of local memory (an array indexed at run time)")
            for pattern, need, const in geometry:
                if re.search(pattern, name) and blocks < need:
                    failures.append(f"{short}: {u.get('REG')} registers and {u.get('SHARED')} B shared leave {blocks} "
                                    f"resident blocks of {threads} threads; {const} assumes {need}")
            if re.search(args.vector_kernels, name):
                if not loops:
                    failures.append(f"{short}: no loop with 128-bit stores in the disassembly")
                elif any(w != "128" for loop in loops for w in loop[2]):
                    failures.append(f"{short}: its vector loops issue narrower global accesses ({mix})")
    if kernels == 0:
        failures.append("no kernels found in the objects")
    for f in failures:
        print("FAIL " + f)
    print(f"{kernels} kernels, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
