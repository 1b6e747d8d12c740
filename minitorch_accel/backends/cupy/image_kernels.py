"""CUDA sources of the CuPy backend's image kernels: im2col, col2im and max pooling.

See :mod:`minitorch_accel.backends.cupy.kernel_spec` for what a :class:`KernelSpec`
holds. Each kernel decodes its element index ``i`` into image coordinates and reads
its inputs through ``raw`` arrays indexed by ``{n, c, y, x}``, so inputs of any strides
(NCHW, or an NCHW view of NHWC memory) work without copies. The gradients (col2im, max
pooling's backward) run one thread per *input* pixel and gather, so they need no
atomics and are deterministic.
"""

from __future__ import annotations

from .kernel_spec import KernelSpec

IM2COL = KernelSpec(
    "mta_im2col",
    "raw T img, int32 batch, int32 channels_per_group, int32 h, int32 w, "
    "int32 out_h, int32 out_w, int32 kh, int32 kw, int32 sy, int32 sx, "
    "int32 ph, int32 pw, int32 dy, int32 dx, int32 channels_last, int32 channel_major_k",
    "T col",
    # cols is (groups, M, K) channels-last or (groups, K, M) kernel-major, with
    # M = (n, oy, ox) and K = (ky, kx, c), or K = (c, ky, kx) when channel_major_k (the
    # order of the weight's own memory): split i into its group, row m and column k,
    # decode m and k, read one pixel
    """
    ptrdiff_t k_total = (ptrdiff_t)kh * kw * channels_per_group;
    ptrdiff_t m_total = (ptrdiff_t)batch * out_h * out_w;
    ptrdiff_t k = channels_last ? i % k_total : (i / m_total) % k_total;
    ptrdiff_t m = channels_last ? (i / k_total) % m_total : i % m_total;
    int ox = m % out_w, oy = (m / out_w) % out_h, n = m / ((ptrdiff_t)out_w * out_h);
    int c, kx, ky;
    if (channel_major_k) {
        kx = k % kw; ky = (k / kw) % kh; c = k / (kw * kh);
    } else {
        c = k % channels_per_group; kx = (k / channels_per_group) % kw;
        ky = k / ((ptrdiff_t)channels_per_group * kw);
    }
    int channel = (int)(i / (k_total * m_total)) * channels_per_group + c;
    int y = oy * sy + ky * dy - ph;
    int x = ox * sx + kx * dx - pw;
    if (y >= 0 && y < h && x >= 0 && x < w) {
        ptrdiff_t index[] = {n, channel, y, x};
        col = img[index];
    } else {
        col = (T)0;
    }
    """,
)

COL2IM = KernelSpec(
    "mta_col2im",
    "raw T col, int32 batch, int32 channels, int32 channels_per_group, int32 h, "
    "int32 w, int32 out_h, int32 out_w, int32 kh, int32 kw, int32 sy, int32 sx, "
    "int32 ph, int32 pw, int32 dy, int32 dx, int32 channels_last, int32 channel_major_k",
    "T img",
    # img is NHWC in memory when channels_last (NCHW otherwise); every pixel sums the
    # column entries that read it: the adjoint of im2col, with no atomics
    """
    ptrdiff_t rest = i;
    int n, channel, y, x;
    if (channels_last) {
        channel = rest % channels; rest /= channels;
        x = rest % w; rest /= w;
        y = rest % h; n = rest / h;
    } else {
        x = rest % w; rest /= w;
        y = rest % h; rest /= h;
        channel = rest % channels; n = rest / channels;
    }
    int g = channel / channels_per_group;
    int c = channel % channels_per_group;
    ptrdiff_t m_total = (ptrdiff_t)batch * out_h * out_w;
    ptrdiff_t k_total = (ptrdiff_t)kh * kw * channels_per_group;
    T sum = (T)0;
    for (int ky = 0; ky < kh; ++ky) {
        int ty = y + ph - ky * dy;
        if (ty < 0 || ty % sy != 0 || ty / sy >= out_h) continue;
        for (int kx = 0; kx < kw; ++kx) {
            int tx = x + pw - kx * dx;
            if (tx < 0 || tx % sx != 0 || tx / sx >= out_w) continue;
            ptrdiff_t m = ((ptrdiff_t)n * out_h + ty / sy) * out_w + tx / sx;
            ptrdiff_t k = channel_major_k ? ((ptrdiff_t)c * kh + ky) * kw + kx
                                          : ((ptrdiff_t)ky * kw + kx) * channels_per_group + c;
            sum += channels_last ? col[(g * m_total + m) * k_total + k]
                                 : col[(g * k_total + k) * m_total + m];
        }
    }
    img = sum;
    """,
)

# Max pooling. ``neg_inf`` is -infinity in the array type, passed in (NVRTC has no
# INFINITY macro): it stands for the padding, as in the CPU code. Pixel ``(n, c, y, x)``
# is decoded from ``i`` in the memory order of the output (NHWC when channels_last).
_DECODE_NCHW = """
    ptrdiff_t rest = i;
    int n, c, {y}, {x};
    if (channels_last) {{
        c = rest % channels; rest /= channels;
        {x} = rest % {w}; rest /= {w};
        {y} = rest % {h}; n = rest / {h};
    }} else {{
        {x} = rest % {w}; rest /= {w};
        {y} = rest % {h}; rest /= {h};
        c = rest % channels; n = rest / channels;
    }}
"""
_POOL_PARAMS = (
    "int32 channels, int32 h, int32 w, int32 out_h, int32 out_w, int32 kh, int32 kw, "
    "int32 sy, int32 sx, int32 ph, int32 pw, int32 channels_last, T neg_inf"
)

MAX_POOL_FORWARD = KernelSpec(
    "mta_max_pool_forward",
    "raw T x, " + _POOL_PARAMS,
    "T y",
    # one thread per output: the window's maximum (NaN wins, as in NumPy's maximum)
    _DECODE_NCHW.format(y="oy", x="ox", h="out_h", w="out_w")
    + """
    T best = neg_inf;
    for (int ky = 0; ky < kh; ++ky) {
        int iy = oy * sy - ph + ky;
        if (iy < 0 || iy >= h) continue;
        for (int kx = 0; kx < kw; ++kx) {
            int ix = ox * sx - pw + kx;
            if (ix < 0 || ix >= w) continue;
            ptrdiff_t index[] = {n, c, iy, ix};
            T v = x[index];
            if (v > best || v != v) best = v;
        }
    }
    y = best;
    """,
)

MAX_POOL_BACKWARD = KernelSpec(
    "mta_max_pool_backward",
    "raw T x, raw T y, raw T gy, " + _POOL_PARAMS,
    "T gx",
    # one thread per input pixel, no atomics: for each window holding the pixel, find
    # the window's first maximum in row-major order (padding is -inf), or in a window
    # holding NaN its last NaN (as PyTorch), and take the window's gradient if it is
    # this pixel
    _DECODE_NCHW.format(y="iy", x="ix", h="h", w="w")
    + """
    T sum = (T)0;
    for (int ky = 0; ky < kh; ++ky) {
        int ty = iy + ph - ky;
        if (ty < 0 || ty % sy != 0 || ty / sy >= out_h) continue;
        int oy = ty / sy;
        for (int kx = 0; kx < kw; ++kx) {
            int tx = ix + pw - kx;
            if (tx < 0 || tx % sx != 0 || tx / sx >= out_w) continue;
            int ox = tx / sx;
            ptrdiff_t out_index[] = {n, c, oy, ox};
            T target = y[out_index];
            bool nan_window = target != target;
            int first = kh * kw - 1;
            for (int k = 0; k < kh * kw; ++k) {
                int py = oy * sy - ph + k / kw;
                int px = ox * sx - pw + k % kw;
                T v = neg_inf;
                if (py >= 0 && py < h && px >= 0 && px < w) {
                    ptrdiff_t in_index[] = {n, c, py, px};
                    v = x[in_index];
                }
                if (nan_window) {
                    if (v != v) first = k;
                } else if (v == target) {
                    first = k;
                    break;
                }
            }
            if (first == ky * kw + kx) sum += gy[out_index];
        }
    }
    gx = sum;
    """,
)
