/* The seqlock of seqlock.fgv for SPIN (issue 11's comparison): one shared access per step,
   2 writers + 2 readers, one operation each. Run without partial-order reduction:
     spin -a seqlock.pml && cc -O2 -DNOREDUCE -DSAFETY -o pan pan.c && ./pan -m100000
   A reader asserts that the pair it returns was written by one write. */
byte ver = 0;
byte d0 = 0;
byte d1 = 0;
byte wl = 0;

proctype Writer(byte v) {
    byte s;
acquire:
    atomic { if :: wl == 0 -> wl = 1 :: else -> goto acquire fi };
    s = ver;
    ver = s + 1;
    d0 = v;
    d1 = v;
    ver = s + 2;
    wl = 0
}

proctype Reader() {
    byte v1, v2, a, b;
retry:
    v1 = ver;
    if
    :: v1 % 2 == 0 ->
        a = d0;
        b = d1;
        v2 = ver;
        if
        :: v1 == v2 -> assert(a == b)
        :: else -> goto retry
        fi
    :: else -> goto retry
    fi
}

init {
    atomic {
        run Writer(1);
        run Writer(2);
        run Reader();
        run Reader()
    }
}
