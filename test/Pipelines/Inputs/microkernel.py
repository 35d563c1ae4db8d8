"""Summarizes the micro-kernels in an assembly file, for FileCheck.

For each function, finds the basic block with the most vector FMAs (x86
vfmadd*, AArch64 fmla) -- the inner loop of a register-tiled micro-kernel --
and prints one line:

    <function>: <n> fma on <register class>, <s> spills, <r> reloads

where spills and reloads are the stack accesses LLVM's register allocator
annotates in that block ("Spill", "Reload"). A micro-kernel whose
accumulators fit the register file has none.
"""

import re
import sys

FMA = re.compile(r"^\s+(vfmadd\d+ps|vfmadd\d+pd|fmla)\s+(.*)$")
REGISTER = re.compile(r"%(zmm|ymm|xmm)\d+|\bv\d+\.(4s|2d|8h)")


def register_class(operands):
    match = REGISTER.search(operands)
    if not match:
        return "?"
    return match.group(1) or "v." + match.group(2)


def main(path):
    function, block, blocks = None, None, []
    for line in open(path):
        label = re.match(r"^([A-Za-z_.$][\w.$]*):", line)
        if label:
            name = label.group(1)
            if not name.startswith(".L") and not name.startswith("$"):
                function = name
            block = {"function": function, "fma": 0, "classes": set(),
                     "spills": 0, "reloads": 0}
            blocks.append(block)
            continue
        if block is None:
            continue
        fma = FMA.match(line)
        if fma:
            block["fma"] += 1
            block["classes"].add(register_class(fma.group(2)))
        block["spills"] += "Spill" in line
        block["reloads"] += "Reload" in line
    best = {}
    for block in blocks:
        if block["fma"] and block["fma"] > best.get(block["function"], {"fma": 0})["fma"]:
            best[block["function"]] = block
    for function, block in best.items():
        classes = ",".join(sorted(block["classes"]))
        print(f"{function}: {block['fma']} fma on {classes}, "
              f"{block['spills']} spills, {block['reloads']} reloads")


if __name__ == "__main__":
    main(sys.argv[1])
