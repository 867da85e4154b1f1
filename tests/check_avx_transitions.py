#!/usr/bin/env python3
"""No AVX code path reaches legacy-SSE code with the upper halves of the YMM registers dirty.

On Intel cores (seen on the Sapphire/Emerald Rapids host of the twenty-second speed session), a
legacy (non-VEX) SSE instruction executed while some YMM register's upper half is non-zero pays a
merge with that upper half on every instruction that writes an XMM register, until a vzeroupper:
one such path, pairs_avx2's tail call of a scalar helper, cost a disc-stack sample 13 % of its
wall time, and the AVX2 clones of the 3-D enumeration calling their scalar helpers a quarter of a
box-on-an-edge impact step.  GCC inserts vzeroupper before most calls and returns of AVX code, but
not before a sibling call nor before a call to a local function it knows leaves the YMM registers
alone (IPA-RA), whatever that function's encoding.  The fix is that the helper is compiled with
VEX encoding too (SVI_SIMD clones; GCC calls the matching clone directly) -- this check keeps it so.

usage: check_avx_transitions.py FILE...      objdump -d each file (a shared library or executable)
       check_avx_transitions.py --self-test  the check on three small listings: a leak through a YMM
                                             register, one through a ZMM register, and no leak

For every function that uses a YMM register: a forward may-be-dirty flow over its instructions and
its jumps within the function.  Dirty after an instruction naming %ymm or %zmm (the 512-bit
FTRAN copy of svi_lcp.c: its upper halves are the same state), clean after vzeroupper and
after a call (the callee returns clean, as the ABI's convention is).  Reported: a call or a tail
jump, while maybe dirty, to a function of the same file that contains legacy SSE instructions on
XMM registers, and a return while maybe dirty (its caller may be SSE code).  Exit status 1 with
the list if any.  A may-be-dirty flow over-approximates: a path the CPU check never takes still
counts (write such a path so that it is clean).
"""
import re
import subprocess
import sys

FUNC = re.compile(r'^([0-9a-f]+) <(.+)>:$')
TARGET = re.compile(r'<([^>+]+)(\+0x[0-9a-f]+)?>')
# legacy SSE mnemonics that write or read XMM registers (VEX forms start with 'v')
SSE = re.compile(r'^(movs[sd]|mova[ps][sd]|movup[sd]|(add|sub|mul|div|sqrt|max|min)[sp][sd]|'
                 r'(xor|and|andn|or)p[sd]|u?comis[sd]|cvt\w+|pxor|por|pand|pandn|movq|movd|'
                 r'unpck[lh]p[sd]|shufp[sd]|mov[hl]p[sd]|pshufd|punpck\w+|padd\w+|psub\w+|'
                 r'ps[rl]l\w*|cmp\w*[sp][sd]|rounds[sd]|movdq[au]|blendvp[sd])$')


def parse(lines):
    funcs, order, cur = {}, [], None
    for line in lines:
        m = FUNC.match(line.strip())
        if m:
            cur = m.group(2)
            funcs[cur] = []
            order.append(cur)
            continue
        if cur is None or '\t' not in line:
            continue
        parts = line.split('\t')
        if len(parts) < 2 or not parts[1].strip():
            continue
        try:
            addr = int(parts[0].strip().rstrip(':'), 16)
        except ValueError:
            continue
        funcs[cur].append((addr, parts[1].strip()))
    return funcs, order


def is_sse(ins):
    for _, text in ins:
        op = text.split()[0]
        if SSE.match(op) and '%xmm' in text:
            return True
    return False


def wide(text):
    return '%ymm' in text or '%zmm' in text


def check(lines):
    funcs, order = parse(lines)
    sse = {name: is_sse(ins) for name, ins in funcs.items()}
    found = []
    for name in order:
        ins = funcs[name]
        if not any(wide(text) for _, text in ins):
            continue
        at = {addr: k for k, (addr, _) in enumerate(ins)}
        dirty = [False] * len(ins)
        seen = [False] * len(ins)
        work = [0]   # ins is not empty: it names %ymm or %zmm
        seen[0] = True
        while work:
            k = work.pop()
            d = dirty[k]
            addr, text = ins[k]
            op = text.split()[0]
            if op == 'vzeroupper':
                d = False
            elif wide(text):
                d = True
            tm = TARGET.search(text)
            tname = tm.group(1) if tm else None
            local = tm is not None and tname == name and tm.group(2) is not None
            succ = []
            if op.startswith('ret'):
                if d:
                    found.append((name, addr, 'return'))
            elif op == 'jmp':
                if local:
                    t = at.get(int(text.split()[1], 16))
                    if t is not None:
                        succ.append(t)
                elif tname and d and sse.get(tname, False):
                    found.append((name, addr, 'tail jump to ' + tname))
            elif op.startswith('j'):
                if local:
                    t = at.get(int(text.split()[1], 16))
                    if t is not None:
                        succ.append(t)
                succ.append(k + 1)
            elif op == 'call':
                if d and tname and sse.get(tname, False):
                    found.append((name, addr, 'call of ' + tname))
                d = False
                succ.append(k + 1)
            else:
                succ.append(k + 1)
            for s in succ:
                if s < len(ins) and (not seen[s] or (d and not dirty[s])):
                    seen[s] = True
                    dirty[s] = dirty[s] or d
                    work.append(s)
    return found


LEAK = """
0000000000001000 <sse_helper>:
    1000:	movsd  (%rdi),%xmm0
    1004:	addsd  %xmm0,%xmm0
    1008:	ret
0000000000001010 <kernel_avx2>:
    1010:	vmovupd (%rdi),%ymm0
    1014:	vaddpd %ymm0,%ymm0,%ymm0
    1018:	vmovupd %ymm0,(%rsi)
    101c:	test   %edx,%edx
    101e:	je     1030 <kernel_avx2+0x20>
    1020:	vzeroupper
    1023:	ret
    1030:	jmp    1000 <sse_helper>
"""
CLEAN = LEAK.replace("    1030:\tjmp    1000 <sse_helper>", "    1030:\tvzeroupper\n    1033:\tjmp    1000 <sse_helper>")
LEAK512 = LEAK.replace("%ymm0", "%zmm0").replace("kernel_avx2", "kernel_512")


def self_test():
    leak = check(LEAK.split('\n'))
    clean = check(CLEAN.split('\n'))
    leak512 = check(LEAK512.split('\n'))
    ok = (leak == [('kernel_avx2', 0x1030, 'tail jump to sse_helper')] and clean == [] and
          leak512 == [('kernel_512', 0x1030, 'tail jump to sse_helper')])
    print('self-test:', 'the leaks (YMM and ZMM) are found and the clean listing passes' if ok else
          'FAILED (leak: %r, clean: %r, 512-bit leak: %r)' % (leak, clean, leak512))
    return 0 if ok else 1


def main(argv):
    if argv == ['--self-test']:
        return self_test()
    if not argv:
        print(__doc__.split('\n\n')[2])
        return 2
    bad = 0
    for path in argv:
        out = subprocess.run(['objdump', '-d', '--no-show-raw-insn', path], check=True,
                             capture_output=True, text=True).stdout.split('\n')
        found = check(out)
        for name, addr, what in found:
            print('%s: %s at %#x: %s with the upper YMM state maybe dirty' % (path, name, addr, what))
        if not found:
            print('%s: no AVX path reaches legacy SSE code dirty' % path)
        bad += len(found)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
