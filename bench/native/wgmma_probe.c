// Does NVIDIA's OpenCL compiler accept Hopper's wgmma (warpgroup MMA) in inline PTX? Builds two
// kernels (the fence alone; a full m64n8k8 tf32 wgmma) and prints each build's status and log.
//   cc -O2 bench/native/wgmma_probe.c -lOpenCL -o /tmp/wgmma_probe && /tmp/wgmma_probe
// On an H200 (driver 580.159.04) both fail: the driver's PTX targets sm_90, not sm_90a
// (bench/RESULTS.md, session 18).
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
static const char* src[2] = {
  "__kernel void k(__global float* o) { asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\"); o[0] = 1.0f; }",
  "__kernel void k(__global float* o, ulong da, ulong db, int scale) {\n"
  "  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;\n"
  "  asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n"
  "  asm volatile(\"{\\n .reg .pred p;\\n setp.ne.b32 p, %6, 0;\\n"
  " wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0,%1,%2,%3}, %4, %5, p, 1, 1;\\n}\\n\"\n"
  "     : \"+f\"(d0), \"+f\"(d1), \"+f\"(d2), \"+f\"(d3) : \"l\"(da), \"l\"(db), \"r\"(scale));\n"
  "  asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n"
  "  asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
  "  o[get_global_id(0)] = d0 + d1 + d2 + d3;\n}\n"};
int main(void) {
  cl_platform_id plats[8]; cl_uint np = 0; clGetPlatformIDs(8, plats, &np);
  for (cl_uint i = 0; i < np; ++i) {
    cl_device_id dev; if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS) continue;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, NULL);
    for (int s = 0; s < 2; ++s) {
      cl_program p = clCreateProgramWithSource(ctx, 1, &src[s], NULL, NULL);
      cl_int err = clBuildProgram(p, 1, &dev, "-cl-nv-verbose", NULL, NULL);
      char log[16384] = {0}; clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
      printf("kernel %d: build %s (%d)\n%s\n", s, err == CL_SUCCESS ? "OK" : "FAILED", err, log);
    }
    return 0;
  }
  printf("no GPU\n");
  return 1;
}
