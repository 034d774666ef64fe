/* Host cost of the OpenCL calls every torch_ocl launch makes, on the first GPU (or any)
 * device: clSetKernelArg for a buffer and for a scalar, and clEnqueueNDRangeKernel of a
 * trivial kernel, each timed back to back (no waiting for the device).
 *   cc -O2 bench/native/cl_overhead.c -lOpenCL -o /tmp/cl_overhead && /tmp/cl_overhead */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { printf("%s failed: %d\n", #x, e_); exit(1); } } while (0)

static const char* src =
    "__kernel void one(__global float* a) { if (get_global_id(0) == 0) a[0] += 1.0f; }\n"
    "__kernel void many(__global float* a, ulong o0, __global float* b, ulong o1, __global float* c, ulong o2,\n"
    "                   __global float* d, ulong o3, long s0, long s1, long s2, long s3, long s4, long s5,\n"
    "                   long s6, long s7, long s8, long s9, long s10, long s11, int m, int n, int k,\n"
    "                   float alpha, float beta) {\n"
    "  if (get_global_id(0) == 0) a[o0] += alpha * (float)(s0 + s11 + m + n + k) + beta; }\n";

/* "wide": 48 buffer arguments, as a multi-tensor launch (6 lists x 8 tensors) has. */
static char wide_src[16384];
static void make_wide_src(void) {
  char* p = wide_src;
  p += sprintf(p, "__kernel void wide(");
  for (int i = 0; i < 48; ++i) p += sprintf(p, "%s__global float* b%d", i ? ", " : "", i);
  p += sprintf(p, ") { if (get_global_id(0) == 0) { b0[0] += 1.0f");
  for (int i = 1; i < 48; ++i) p += sprintf(p, " + b%d[1]", i);
  p += sprintf(p, "; } }\n");
  /* the same signature with b1..b47 null (unused multi-tensor slots): pointers only compared */
  p += sprintf(p, "__kernel void wide_null(");
  for (int i = 0; i < 48; ++i) p += sprintf(p, "%s__global float* b%d", i ? ", " : "", i);
  p += sprintf(p, ") { if (get_global_id(0) == 0) { b0[0] += 1.0f");
  for (int i = 1; i < 48; ++i) p += sprintf(p, " + (b%d != 0)", i);
  p += sprintf(p, "; } }\n");
}

int main(void) {
  make_wide_src();
  cl_platform_id plats[8];
  cl_uint np = 0;
  CHECK(clGetPlatformIDs(8, plats, &np));
  cl_device_id dev = 0;
  for (cl_uint i = 0; i < np && !dev; ++i)
    if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS) dev = 0;
  if (!dev) CHECK(clGetDeviceIDs(plats[0], CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
  char name[256];
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CHECK(err);
  for (int prof = 0; prof < 2; ++prof) {
    cl_command_queue q = clCreateCommandQueue(ctx, dev, prof ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    CHECK(err);
    const char* srcs[2] = {src, wide_src};
    cl_program p = clCreateProgramWithSource(ctx, 2, srcs, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(p, 1, &dev, "", NULL, NULL));
    cl_kernel k1 = clCreateKernel(p, "one", &err), k2 = clCreateKernel(p, "many", &err);
    cl_kernel k3 = clCreateKernel(p, "wide", &err);
    CHECK(err);
    cl_mem bufs[4], many_bufs[48];
    for (int i = 0; i < 4; ++i) bufs[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 20, NULL, &err);
    for (int i = 0; i < 48; ++i) many_bufs[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 16, NULL, &err);
    const int N = 20000;
    size_t g = 256, l = 256;
    CHECK(clSetKernelArg(k1, 0, sizeof(cl_mem), &bufs[0]));
    for (int i = 0; i < 1000; ++i) clEnqueueNDRangeKernel(q, k1, 1, NULL, &g, &l, 0, NULL, NULL);
    clFinish(q);
    double t0 = now_us();
    for (int i = 0; i < N; ++i) clSetKernelArg(k1, 0, sizeof(cl_mem), &bufs[i & 3]);
    double t_mem = (now_us() - t0) / N;
    cl_long v = 0;
    t0 = now_us();
    for (int i = 0; i < N; ++i) { v = i; clSetKernelArg(k2, 8, sizeof(cl_long), &v); }
    double t_scalar = (now_us() - t0) / N;
    t0 = now_us();
    for (int i = 0; i < N; ++i) clEnqueueNDRangeKernel(q, k1, 1, NULL, &g, &l, 0, NULL, NULL);
    double t_enq = (now_us() - t0) / N;
    clFinish(q);
    /* a launch like gemm's: 25 arguments set, then enqueue */
    t0 = now_us();
    for (int i = 0; i < N; ++i) {
      cl_uint a = 0;
      for (int j = 0; j < 4; ++j) {
        cl_ulong off = 0;
        clSetKernelArg(k2, a++, sizeof(cl_mem), &bufs[(i + j) & 3]);
        clSetKernelArg(k2, a++, sizeof(cl_ulong), &off);
      }
      for (int j = 0; j < 12; ++j) { cl_long s = j; clSetKernelArg(k2, a++, sizeof(cl_long), &s); }
      for (int j = 0; j < 3; ++j) { cl_int s = 64; clSetKernelArg(k2, a++, sizeof(cl_int), &s); }
      float f = 1.0f;
      clSetKernelArg(k2, a++, sizeof(float), &f);
      clSetKernelArg(k2, a++, sizeof(float), &f);
      clEnqueueNDRangeKernel(q, k2, 1, NULL, &g, &l, 0, NULL, NULL);
    }
    double t_full = (now_us() - t0) / N;
    clFinish(q);
    /* 48 buffer arguments: all distinct, or all the same buffer */
    double t_wide[2];
    for (int same = 0; same < 2; ++same) {
      for (int j = 0; j < 48; ++j) clSetKernelArg(k3, j, sizeof(cl_mem), &many_bufs[same ? 0 : j]);
      for (int i = 0; i < 200; ++i) clEnqueueNDRangeKernel(q, k3, 1, NULL, &g, &l, 0, NULL, NULL);
      clFinish(q);
      t0 = now_us();
      for (int i = 0; i < N / 4; ++i) {
        clSetKernelArg(k3, i % 48, sizeof(cl_mem), &many_bufs[same ? 0 : i % 48]);
        clEnqueueNDRangeKernel(q, k3, 1, NULL, &g, &l, 0, NULL, NULL);
      }
      t_wide[same] = (now_us() - t0) / (N / 4);
      clFinish(q);
    }
    /* 1 buffer and 47 null arguments */
    cl_kernel k4 = clCreateKernel(p, "wide_null", &err);
    CHECK(err);
    cl_mem nul = NULL;
    CHECK(clSetKernelArg(k4, 0, sizeof(cl_mem), &many_bufs[0]));
    for (int j = 1; j < 48; ++j) CHECK(clSetKernelArg(k4, j, sizeof(cl_mem), &nul));
    for (int i = 0; i < 200; ++i) clEnqueueNDRangeKernel(q, k4, 1, NULL, &g, &l, 0, NULL, NULL);
    clFinish(q);
    t0 = now_us();
    for (int i = 0; i < N / 4; ++i) {
      clSetKernelArg(k4, 1 + i % 47, sizeof(cl_mem), &nul);
      clEnqueueNDRangeKernel(q, k4, 1, NULL, &g, &l, 0, NULL, NULL);
    }
    const double t_null = (now_us() - t0) / (N / 4);
    clFinish(q);
    clReleaseKernel(k4);
    printf("  48 buffer args + enqueue: distinct %.3f us, all the same buffer %.3f us, 1 buffer + 47 null %.3f us\n",
           t_wide[0], t_wide[1], t_null);
    t0 = now_us();
    for (int i = 0; i < 2000; ++i) { clEnqueueNDRangeKernel(q, k1, 1, NULL, &g, &l, 0, NULL, NULL); clFinish(q); }
    double t_rt = (now_us() - t0) / 2000;
    printf("%s, queue profiling %s: setarg(mem) %.3f us, setarg(long) %.3f us, enqueue %.3f us, "
           "25 args + enqueue %.3f us, enqueue + finish %.2f us\n",
           name, prof ? "on " : "off", t_mem, t_scalar, t_enq, t_full, t_rt);
    for (int i = 0; i < 4; ++i) clReleaseMemObject(bufs[i]);
    for (int i = 0; i < 48; ++i) clReleaseMemObject(many_bufs[i]);
    clReleaseKernel(k3);
    clReleaseKernel(k1); clReleaseKernel(k2); clReleaseProgram(p); clReleaseCommandQueue(q);
  }
  return 0;
}
