#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Extract the members of a .tar.xz that match a pattern, decompressing
only the last xz blocks, as many as hold them.

    python3 tests/ftrace/extract.py TARBALL DEST PATTERN

What `tar -xJf TARBALL -C DEST --wildcards PATTERN` extracts, for a
tarball compressed in independent blocks (xz -T, as Debian's
linux-source is: 62 blocks of 24 MiB) whose matching members are near
its end (tools/testing/selftests/ftrace: the last block): tar
decompresses all 1.5 GB (~12 s of CPU), this the last 23 MB.  Blocks are
taken from the end until the first member of what they hold does not
match and one that matches is in it.  Exits 1, having written nothing,
when the file is not such a tarball (one stream, blocks that name their
filters, LZMA2 alone): tests/ftrace/run.sh then runs tar.
"""
import fnmatch
import io
import lzma
import os
import struct
import sys
import tarfile


class Unsupported(Exception):
    pass


def varint(buf, pos):
    val = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise Unsupported("bad integer")
        byte = buf[pos]
        pos += 1
        val |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return val, pos


CHECK_SIZE = {0: 0, 1: 4, 4: 8, 10: 32}


def blocks(f, size):
    """(offset, header size, compressed size, dict size) of each block"""
    f.seek(0)
    head = f.read(12)
    if head[:6] != b"\xfd7zXZ\x00":
        raise Unsupported("not an xz file")
    f.seek(size - 12)
    foot = f.read(12)
    if foot[10:] != b"YZ" or foot[8:10] != head[6:8]:
        raise Unsupported("not one stream without padding")
    check = CHECK_SIZE.get(head[7] & 0x0F)
    if check is None:
        raise Unsupported("unknown check")
    isize = (struct.unpack("<I", foot[4:8])[0] + 1) * 4
    istart = size - 12 - isize
    f.seek(istart)
    index = f.read(isize)
    if index[0] != 0:
        raise Unsupported("no index")
    count, pos = varint(index, 1)
    out = []
    off = 12
    usize = 0
    for _ in range(count):
        unpadded, pos = varint(index, pos)
        if usize % 512:
            raise Unsupported("blocks that do not start at a tar block")
        out.append((off, unpadded))
        off += (unpadded + 3) & ~3
        un, pos = varint(index, pos)
        usize += un
    if off != istart:
        raise Unsupported("blocks and index disagree")
    res = []
    for off, unpadded in out:
        f.seek(off)
        hsize = (f.read(1)[0] + 1) * 4
        f.seek(off)
        hdr = f.read(hsize)
        flags = hdr[1]
        if flags & 0x3C or flags & 0x03:
            raise Unsupported("a filter chain, not LZMA2 alone")
        pos = 2
        if flags & 0x40:
            _, pos = varint(hdr, pos)
        if flags & 0x80:
            _, pos = varint(hdr, pos)
        fid, pos = varint(hdr, pos)
        psize, pos = varint(hdr, pos)
        if fid != 0x21 or psize != 1:
            raise Unsupported("not LZMA2")
        bits = hdr[pos] & 0x3F
        if bits > 40:
            raise Unsupported("bad dictionary size")
        dsize = 0xFFFFFFFF if bits == 40 else (2 | (bits & 1)) << (bits // 2 + 11)
        res.append((off, hsize, unpadded - hsize - check, dsize))
    return res


def decode(f, block):
    off, hsize, csize, dsize = block
    f.seek(off + hsize)
    dec = lzma.LZMADecompressor(
        format=lzma.FORMAT_RAW,
        filters=[{"id": lzma.FILTER_LZMA2, "dict_size": dsize}])
    data = dec.decompress(f.read(csize))
    if not dec.eof:
        raise Unsupported("a block does not end where the index says")
    return data


def header_ok(buf, pos):
    """a ustar header with a right checksum at pos"""
    h = buf[pos:pos + 512]
    if len(h) < 512 or h[257:262] != b"ustar":
        return False
    try:
        want = int(h[148:156].split(b"\0")[0].strip() or b"-1", 8)
    except ValueError:
        return False
    return sum(h[:148]) + 8 * 32 + sum(h[156:]) == want


def wanted(member, pattern):
    # as tar matches: the name without a directory's trailing slash,
    # "*" matching "/" too
    return fnmatch.fnmatchcase(member.name, pattern)


def main():
    if len(sys.argv) != 4:
        print("usage: extract.py TARBALL DEST PATTERN", file=sys.stderr)
        return 2
    src, dest, pattern = sys.argv[1:]
    with open(src, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        blist = blocks(f, size)
        data = b""
        for k in range(len(blist) - 1, -1, -1):
            data = decode(f, blist[k]) + data
            # the first member header in what is decoded (the blocks
            # start at multiples of 512 bytes of the tar stream)
            start = next((p for p in range(0, len(data), 512)
                          if header_ok(data, p)), None)
            if start is None:
                continue
            try:
                with tarfile.open(fileobj=io.BytesIO(data[start:]),
                                  mode="r:") as tar:
                    members = tar.getmembers()
            except tarfile.TarError:
                continue
            if not members or wanted(members[0], pattern) and k > 0:
                continue
            take = [m for m in members if wanted(m, pattern)]
            if not take:
                if k > 0:
                    continue
                raise Unsupported("nothing matches")
            with tarfile.open(fileobj=io.BytesIO(data[start:]),
                              mode="r:") as tar:
                sel = [m for m in tar.getmembers() if wanted(m, pattern)]
                # as tar, run by root, extracts them (owners, modes)
                if hasattr(tarfile, "fully_trusted_filter"):
                    tar.extractall(dest, members=sel, filter="fully_trusted")
                else:
                    tar.extractall(dest, members=sel)
            return 0
    raise Unsupported("not found")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (Unsupported, lzma.LZMAError, OSError, IndexError) as e:
        print("extract.py: %s" % e, file=sys.stderr)
        sys.exit(1)
