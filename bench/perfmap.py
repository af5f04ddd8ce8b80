"""Run one of our commands in this process and let `perf` name numba's compiled functions.

    perf record -F 1999 -o /tmp/perf.data .venv/bin/python bench/perfmap.py svm-train ARGS...
    perf report -i /tmp/perf.data --no-children --sort dso,symbol

perf finds JIT code through /tmp/perf-PID.map ("start size name" lines). numba keeps no such
map, and after loading a cached function it even drops the object code, so this script keeps
each library's object bytes as they are set, reads their ELF symbol tables at the end of the run
(every function LLVM emitted, inlined-away callees' out-of-line copies included), and places
each section by the address the engine gives for the overload's entry function. Symbols in a
section other than the entry's are not placed. Development aid only; not used by the product.
"""

import atexit
import gc
import os
import re
import struct
import sys
import zlib

from numba.core import codegen
from numba.core.dispatcher import Dispatcher

_set_compiled_object = codegen.CPUCodeLibrary._set_compiled_object


def _keep_object(self, value):
    self._perfmap_object = value
    _set_compiled_object(self, value)


codegen.CPUCodeLibrary._set_compiled_object = _keep_object


def elf_functions(blob):
    """(section index, offset, size, name) of each FUNC symbol in a 64-bit little-endian ELF."""
    shoff, = struct.unpack_from("<Q", blob, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", blob, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", blob, shoff + i * shentsize) for i in range(shnum)]
    out = []
    for _, sh_type, _, _, offset, size, link, _, _, entsize in sections:
        if sh_type != 2:  # SHT_SYMTAB
            continue
        strtab = sections[link][4]
        for at in range(offset, offset + size, entsize):
            st_name, st_info, _, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", blob, at)
            if st_info & 0xF == 2 and st_size:  # STT_FUNC
                end = blob.index(b"\0", strtab + st_name)
                out.append((st_shndx, st_value, st_size, blob[strtab + st_name:end].decode()))
    return out


def short_name(symbol):
    """lasvm_cli.numerics.kernels.kernel_row_serial#3f2a for numba's mangled names (the suffix
    tells overloads apart); other names unchanged."""
    if not symbol.startswith("_ZN"):
        return symbol
    parts, at = [], 3
    while at < len(symbol) and symbol[at].isdigit():
        digits = re.match(r"\d+", symbol[at:]).group()
        at += len(digits)
        parts.append(symbol[at:at + int(digits)])
        at += int(digits)
    return ".".join(parts) + f"#{zlib.crc32(symbol.encode()) & 0xFFFF:04x}"


def overload_entries():
    """(library, entry symbol name) of every compiled overload of every live dispatcher."""
    for obj in gc.get_objects():
        if isinstance(obj, Dispatcher):
            for cres in obj.overloads.values():
                yield cres.library, cres.fndesc.llvm_func_name


def nrt_lines():
    """numba's reference counting (the atomic add in NRT_incref / NRT_decref): in every profile
    of a solver, and otherwise unnamed."""
    from numba.core.runtime import nrt

    library = nrt.rtsys._library
    return [f"{library.get_pointer_to_function(name):x} 10 {name}\n"
            for name in ("NRT_incref", "NRT_decref")]


def write_map():
    lines, seen = [], set()
    for library, entry in overload_entries():
        blob = getattr(library, "_perfmap_object", None) or getattr(library, "_compiled_object", None)
        if blob is None or id(library) in seen:
            continue
        seen.add(id(library))
        symbols = elf_functions(bytes(blob))
        start = {name: (shndx, offset) for shndx, offset, _, name in symbols}
        if entry not in start:
            continue
        shndx, offset = start[entry]
        base = library.get_pointer_to_function(entry) - offset
        lines += [f"{base + off:x} {size:x} {short_name(name)}\n" for sec, off, size, name in symbols if sec == shndx]
    lines += nrt_lines()
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as f:
        f.writelines(lines)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    os.environ["LASVM_SERVER"] = "0"  # run here, not in a warm server
    from lasvm_cli.cli import main as commands

    prog = sys.argv[1]
    sys.argv = sys.argv[1:]
    atexit.register(write_map)
    getattr(commands, prog.replace("-", "_"))()


if __name__ == "__main__":
    main()
