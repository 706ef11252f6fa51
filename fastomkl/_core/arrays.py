"""Array layouts the compiled components share: zeros that start on cache lines, and the rows in
use of arrays allocated at a budget's capacity."""
import numpy as np


def aligned_zeros(shape, dtype=np.float64):
    """Zeros of `shape`, starting on a 64-byte boundary.  The allocator only promises 16 bytes,
    and which of the four offsets an array gets depends on the heap's history: arrays streamed
    by whole-vector loads (frequencies, expert weights) whose rows are whole cache lines then
    straddle two lines on every load, or none, from one model to the next (Raker-76: 12-15%
    of a round between otherwise identical models)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64))
    raw = np.zeros(size + 64 // dtype.itemsize, dtype=dtype)
    start = (-raw.ctypes.data % 64) // dtype.itemsize
    return raw[start:start + size].reshape(shape)


def aligned_rows(n: int, dim: int):
    """Zeros (n, ld), ld >= dim a multiple of 8 doubles, starting on a 64-byte boundary: every
    row starts a cache line, so whole-vector loads of a row never straddle two."""
    return aligned_zeros((n, (dim + 7) // 8 * 8))


def rows_in_use(live, starts, counts):
    """The rows of `live` in use, block j being counts[j] rows from starts[j], one block after the
    other: what a state stores of an array allocated at a budget's capacity."""
    return np.concatenate([live[start:start + count] for start, count in zip(starts, counts)])


def at_capacity(held, capacity, starts, counts):
    """`held` (``rows_in_use``'s) put back in zeros of shape `capacity`, its dtype kept; None when
    its shape is not that of those rows, or a block leaves the capacity (a state at capacity
    already, or one to refuse)."""
    held = np.asarray(held)
    if (held.shape != (int(sum(counts)),) + tuple(capacity[1:])
            or any(count < 0 or start + count > capacity[0]
                   for start, count in zip(starts, counts))):
        return None
    out = np.zeros(capacity, dtype=held.dtype)
    offset = 0
    for start, count in zip(starts, counts):
        out[start:start + count] = held[offset:offset + count]
        offset += count
    return out
