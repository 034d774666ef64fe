// The fused LSTM and GRU cells (ops/rnn.cpp): one work-item per (batch row b, hidden unit j)
// does the whole cell, forward or backward, in ACC. Inputs are read through their strides
// (the gate matrices are often slices of one precomputed product); outputs are contiguous.
// Gate matrices are (B, G * H), gate q of unit j in column q * H + j. Workspaces (private to
// the forward/backward pairs): LSTM [i, f, g, o] activated, (B, 4H); GRU [r, z, n, hx, hn],
// (B, 5H).
#include "common.clh"

#ifndef X_KIND
#define X_KIND 0  // storage kind: 0 float, 1 double, 2 half, 3 bfloat16
#endif
#ifndef ACC
#define ACC float
#endif

#include "storage_kinds.clh"
#define X_T CAT(ST_, X_KIND)
#define LOAD_X(p, i) CAT(LD_, X_KIND)(p, i)
#define STORE_X(p, i, v) CAT(SV_, X_KIND)(p, i, v)

inline ACC sigmoid_acc(ACC x) { return (ACC)1 / ((ACC)1 + exp(-x)); }

// Element (b, col) of a (B, G * H) matrix with row stride rs and column stride cs.
#define AT2(p, b, col, rs, cs) LOAD_X(p, (b) * (rs) + (col) * (cs))
// A bias's value for column col (0 without a bias: has == 0).
#define BIAS(p, has, col, s) ((has) ? LOAD_X(p, (col) * (s)) : (ACC)0)

// hy (B, H) with row stride hy_r, cy (B, H) and the workspace from the two gate matrices, the
// biases and cx.
__kernel void lstm_cell_fwd(PTR_ARG(X_T, ig), PTR_ARG(X_T, hg), PTR_ARG(X_T, cx), PTR_ARG(X_T, ib),
                            PTR_ARG(X_T, hb), PTR_ARG(X_T, hy), PTR_ARG(X_T, cy), PTR_ARG(X_T, ws), long B, long H,
                            long ig_r, long ig_c, long hg_r, long hg_c, long cx_r, long cx_c, int has_ib, long ib_s,
                            int has_hb, long hb_s, long hy_r) {
  __global const X_T* igp = PTR(X_T, ig);
  __global const X_T* hgp = PTR(X_T, hg);
  __global const X_T* ibp = PTR(X_T, ib);
  __global const X_T* hbp = PTR(X_T, hb);
  FOR_EACH(e, B * H) {
    const long b = e / H, j = e % H;
    ACC a[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const long col = q * H + j;
      a[q] = AT2(igp, b, col, ig_r, ig_c) + AT2(hgp, b, col, hg_r, hg_c) + BIAS(ibp, has_ib, col, ib_s) +
             BIAS(hbp, has_hb, col, hb_s);
    }
    const ACC i = sigmoid_acc(a[0]), f = sigmoid_acc(a[1]), g = tanh(a[2]), o = sigmoid_acc(a[3]);
    const ACC c = f * AT2(PTR(X_T, cx), b, j, cx_r, cx_c) + i * g;
    STORE_X(PTR(X_T, cy), e, c);
    STORE_X(PTR(X_T, hy), b * hy_r + j, o * tanh(c));
    __global X_T* w = PTR(X_T, ws);
    const long row = b * 4 * H + j;
    STORE_X(w, row, i);
    STORE_X(w, row + H, f);
    STORE_X(w, row + 2 * H, g);
    STORE_X(w, row + 3 * H, o);
  }
}

// grad_gates (B, 4H) and grad_cx (B, H) from the incoming gradients of hy and cy (any may be
// absent), cx, cy and the workspace. cx, cy, ghy, gcy are read through (row, col) strides; hy's
// second gradient gdh (a sequence's recurrent term, the next step's gate gradients times W_hh)
// is contiguous.
__kernel void lstm_cell_bwd(PTR_ARG(X_T, ghy), PTR_ARG(X_T, gcy), PTR_ARG(X_T, cx), PTR_ARG(X_T, cy),
                            PTR_ARG(X_T, ws), PTR_ARG(X_T, ggates), PTR_ARG(X_T, gcx), long B, long H, int has_ghy,
                            long ghy_r, long ghy_c, int has_gcy, long gcy_r, long gcy_c, long cx_r, long cx_c,
                            long cy_r, long cy_c, long ws_r, long ws_c, PTR_ARG(X_T, gdh), int has_gdh) {
  __global const X_T* w = PTR(X_T, ws);
  __global X_T* gg = PTR(X_T, ggates);
  FOR_EACH(e, B * H) {
    const long b = e / H, j = e % H;
    const ACC i = AT2(w, b, j, ws_r, ws_c), f = AT2(w, b, H + j, ws_r, ws_c), g = AT2(w, b, 2 * H + j, ws_r, ws_c),
              o = AT2(w, b, 3 * H + j, ws_r, ws_c);
    const ACC tc = tanh(AT2(PTR(X_T, cy), b, j, cy_r, cy_c));
    const ACC gh = (has_ghy ? AT2(PTR(X_T, ghy), b, j, ghy_r, ghy_c) : (ACC)0) +
                   (has_gdh ? LOAD_X(PTR(X_T, gdh), e) : (ACC)0);
    // d loss / d cy: through hy = o * tanh(cy), plus the incoming cell gradient.
    ACC gc = gh * o * ((ACC)1 - tc * tc);
    if (has_gcy) gc += AT2(PTR(X_T, gcy), b, j, gcy_r, gcy_c);
    const ACC c0 = AT2(PTR(X_T, cx), b, j, cx_r, cx_c);
    const long row = b * 4 * H + j;
    STORE_X(gg, row, gc * g * i * ((ACC)1 - i));
    STORE_X(gg, row + H, gc * c0 * f * ((ACC)1 - f));
    STORE_X(gg, row + 2 * H, gc * i * ((ACC)1 - g * g));
    STORE_X(gg, row + 3 * H, gh * tc * o * ((ACC)1 - o));
    STORE_X(PTR(X_T, gcx), e, gc * f);
  }
}

// hy (B, H) with row stride hy_r and the workspace from the two gate matrices, the biases and hx:
// r = σ(i_r + h_r), z = σ(i_z + h_z), n = tanh(i_n + r * h_n), hy = n + z (hx - n).
__kernel void gru_cell_fwd(PTR_ARG(X_T, ig), PTR_ARG(X_T, hg), PTR_ARG(X_T, hx), PTR_ARG(X_T, ib), PTR_ARG(X_T, hb),
                           PTR_ARG(X_T, hy), PTR_ARG(X_T, ws), long B, long H, long ig_r, long ig_c, long hg_r,
                           long hg_c, long hx_r, long hx_c, int has_ib, long ib_s, int has_hb, long hb_s,
                           long hy_r) {
  __global const X_T* igp = PTR(X_T, ig);
  __global const X_T* hgp = PTR(X_T, hg);
  __global const X_T* ibp = PTR(X_T, ib);
  __global const X_T* hbp = PTR(X_T, hb);
  FOR_EACH(e, B * H) {
    const long b = e / H, j = e % H;
    ACC in[3], hn[3];
#pragma unroll
    for (int q = 0; q < 3; ++q) {
      const long col = q * H + j;
      in[q] = AT2(igp, b, col, ig_r, ig_c) + BIAS(ibp, has_ib, col, ib_s);
      hn[q] = AT2(hgp, b, col, hg_r, hg_c) + BIAS(hbp, has_hb, col, hb_s);
    }
    const ACC r = sigmoid_acc(in[0] + hn[0]), z = sigmoid_acc(in[1] + hn[1]);
    const ACC n = tanh(in[2] + r * hn[2]);
    const ACC h0 = AT2(PTR(X_T, hx), b, j, hx_r, hx_c);
    STORE_X(PTR(X_T, hy), b * hy_r + j, n + z * (h0 - n));
    __global X_T* w = PTR(X_T, ws);
    const long row = b * 5 * H + j;
    STORE_X(w, row, r);
    STORE_X(w, row + H, z);
    STORE_X(w, row + 2 * H, n);
    STORE_X(w, row + 3 * H, h0);
    STORE_X(w, row + 4 * H, hn[2]);
  }
}

// The input and hidden gate gradients (B, 3H each) and grad_hx (B, H) from hy's gradient and
// the workspace; they differ only in the n gate: d(i_n) = dn, d(h_n) = dn * r. hy's gradient is
// ghy (strided) plus gdh (contiguous: a sequence's recurrent term), either may be absent.
__kernel void gru_cell_bwd(PTR_ARG(X_T, ghy), PTR_ARG(X_T, ws), PTR_ARG(X_T, gig), PTR_ARG(X_T, ghg),
                           PTR_ARG(X_T, ghx), long B, long H, long ghy_r, long ghy_c, long ws_r, long ws_c,
                           int has_ghy, PTR_ARG(X_T, gdh), int has_gdh) {
  __global const X_T* w = PTR(X_T, ws);
  __global X_T* gi = PTR(X_T, gig);
  __global X_T* gh = PTR(X_T, ghg);
  FOR_EACH(e, B * H) {
    const long b = e / H, j = e % H;
    const ACC r = AT2(w, b, j, ws_r, ws_c), z = AT2(w, b, H + j, ws_r, ws_c), n = AT2(w, b, 2 * H + j, ws_r, ws_c),
              h0 = AT2(w, b, 3 * H + j, ws_r, ws_c), hn = AT2(w, b, 4 * H + j, ws_r, ws_c);
    const ACC g = (has_ghy ? AT2(PTR(X_T, ghy), b, j, ghy_r, ghy_c) : (ACC)0) +
                  (has_gdh ? LOAD_X(PTR(X_T, gdh), e) : (ACC)0);
    const ACC dz = g * (h0 - n) * z * ((ACC)1 - z);
    const ACC dn = g * ((ACC)1 - z) * ((ACC)1 - n * n);
    const ACC dr = dn * hn * r * ((ACC)1 - r);
    const long row = b * 3 * H + j;
    STORE_X(gi, row, dr);
    STORE_X(gi, row + H, dz);
    STORE_X(gi, row + 2 * H, dn);
    STORE_X(gh, row, dr);
    STORE_X(gh, row + H, dz);
    STORE_X(gh, row + 2 * H, dn * r);
    STORE_X(PTR(X_T, ghx), e, g * z);
  }
}

// nn.RNN's cell: hy = act(i + h + biases), act tanh or (relu != 0) max(0, .), hy written through
// its row stride hy_r. Its backward needs only hy itself, so there is no workspace.
__kernel void rnn_cell_fwd(PTR_ARG(X_T, ig), PTR_ARG(X_T, hg), PTR_ARG(X_T, ib), PTR_ARG(X_T, hb), PTR_ARG(X_T, hy),
                           long B, long H, long ig_r, long ig_c, long hg_r, long hg_c, int has_ib, long ib_s,
                           int has_hb, long hb_s, long hy_r, int relu) {
  __global const X_T* ibp = PTR(X_T, ib);
  __global const X_T* hbp = PTR(X_T, hb);
  FOR_EACH(e, B * H) {
    const long b = e / H, j = e % H;
    const ACC a = AT2(PTR(X_T, ig), b, j, ig_r, ig_c) + AT2(PTR(X_T, hg), b, j, hg_r, hg_c) +
                  BIAS(ibp, has_ib, j, ib_s) + BIAS(hbp, has_hb, j, hb_s);
    STORE_X(PTR(X_T, hy), b * hy_r + j, relu ? fmax(a, (ACC)0) : tanh(a));
  }
}

// The pre-activation's gradient (B, H), contiguous, from hy's gradient (ghy strided plus gdh
// contiguous, either may be absent) and hy (row stride hy_r): tanh' = 1 - hy^2, relu' = hy > 0.
__kernel void rnn_cell_bwd(PTR_ARG(X_T, ghy), PTR_ARG(X_T, gdh), PTR_ARG(X_T, hy), PTR_ARG(X_T, gpre), long B,
                           long H, int has_ghy, long ghy_r, long ghy_c, int has_gdh, long hy_r, int relu) {
  FOR_EACH(e, B * H) {
    const long b = e / H, j = e % H;
    const ACC g = (has_ghy ? AT2(PTR(X_T, ghy), b, j, ghy_r, ghy_c) : (ACC)0) +
                  (has_gdh ? LOAD_X(PTR(X_T, gdh), e) : (ACC)0);
    const ACC y = LOAD_X(PTR(X_T, hy), b * hy_r + j);
    STORE_X(PTR(X_T, gpre), e, relu ? (y > (ACC)0 ? g : (ACC)0) : g * ((ACC)1 - y * y));
  }
}
