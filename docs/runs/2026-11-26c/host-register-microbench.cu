#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <thread>
#include <vector>
#include <atomic>
#include <sys/mman.h>
#include <immintrin.h>
using clk = std::chrono::steady_clock;
static double ms(clk::time_point a, clk::time_point b){return std::chrono::duration<double,std::milli>(b-a).count();}
#define CK(x) do{cudaError_t e=(x); if(e){printf("ERR %s line %d: %s\n",#x,__LINE__,cudaGetErrorString(e)); }}while(0)
static char* big(size_t n, bool huge){ void*p=nullptr; posix_memalign(&p, 1<<21, n); if(huge) madvise(p,n,MADV_HUGEPAGE); else madvise(p,n,MADV_NOHUGEPAGE); memset(p,1,n); return (char*)p; }
static void ntcopy(const char*s,char*d,size_t n){ for(size_t i=0;i<n;i+=16) _mm_stream_si128((__m128i*)(d+i), _mm_loadu_si128((const __m128i*)(s+i))); _mm_sfence(); }
static void plcopy(const char*s,char*d,size_t n){ memcpy(d,s,n); }
// copy n bytes with T threads, each a contiguous stripe
static double par(int T, const char*s, char*d, size_t n, bool nt, size_t dstwrap=0){
  auto a=clk::now(); std::vector<std::thread> th; size_t g0=256<<10; size_t per=(n/T)/g0*g0;
  for(int t=0;t<T;t++) th.emplace_back([=]{ size_t g=256<<10; for(size_t o=t*per;o<(t+1)*per;o+=g){ char* dd = dstwrap? d + (o % dstwrap) : d+o; if(nt) ntcopy(s+o,dd,g); else plcopy(s+o,dd,g);} });
  for(auto&x:th)x.join(); return ms(a,clk::now()); }
int main(){ setvbuf(stdout,NULL,_IONBF,0);
  int T = std::thread::hardware_concurrency(); printf("threads %d\n",T);
  CK(cudaFree(0));
  size_t G=1ull<<30;
  char *dev; CK(cudaMalloc(&dev,G));
  for (int huge=0; huge<2; huge++){
    char* h = big(G, huge);
    for(int r=0;r<3;r++){
      auto a=clk::now(); CK(cudaHostRegister(h,G,0)); auto b=clk::now();
      cudaEvent_t e0,e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
      cudaEventRecord(e0); CK(cudaMemcpyAsync(dev,h,G,cudaMemcpyHostToDevice)); cudaEventRecord(e1); cudaEventSynchronize(e1); float up; cudaEventElapsedTime(&up,e0,e1);
      cudaEventRecord(e0); CK(cudaMemcpyAsync(h,dev,G,cudaMemcpyDeviceToHost)); cudaEventRecord(e1); cudaEventSynchronize(e1); float dn; cudaEventElapsedTime(&dn,e0,e1);
      auto c=clk::now(); CK(cudaHostUnregister(h)); auto d=clk::now();
      printf("huge=%d 1GiB register %.2f ms (%.1f GB/s)  H2D %.2f ms  D2H %.2f ms  unregister %.2f ms (%.1f GB/s)\n",huge,ms(a,b),G/ms(a,b)/1e6,up,dn,ms(c,d),G/ms(c,d)/1e6);
    }
    // chunks of 64 MiB sequential
    { size_t C=64<<20; auto a=clk::now(); for(size_t o=0;o<G;o+=C) CK(cudaHostRegister(h+o,C,0)); auto b=clk::now(); for(size_t o=0;o<G;o+=C) CK(cudaHostUnregister(h+o)); auto c=clk::now();
      printf("huge=%d 16 x 64MiB register %.2f ms, unregister %.2f ms\n",huge,ms(a,b),ms(b,c)); }
    for (int nt : {2,4,8}) { size_t C=G/nt; auto a=clk::now(); std::vector<std::thread> th; for(int t=0;t<nt;t++) th.emplace_back([=]{CK(cudaHostRegister(h+t*C,C,0));}); for(auto&x:th)x.join(); auto b=clk::now();
      th.clear(); for(int t=0;t<nt;t++) th.emplace_back([=]{CK(cudaHostUnregister(h+t*C));}); for(auto&x:th)x.join(); auto c=clk::now();
      printf("huge=%d %d threads register %.2f ms, unregister %.2f ms\n",huge,nt,ms(a,b),ms(b,c)); }
    // copies
    char* p; CK(cudaHostAlloc((void**)&p, G, 0)); memset(p,0,G);
    char* q = big(G, huge);
    for (int t : {8, 15, 16}) {
      for(int r=0;r<2;r++){
      double x=par(t,h,p,G,true), y=par(t,h,p,G,false), z=par(t,p,h,G,true), w=par(t,p,h,G,false), v=par(t,h,q,G,true), u=par(t,h,p,G,false,4<<20), s=par(t,h,p,G,false,32<<20);
      printf("huge=%d T=%d GB/s: pageable->pinned nt %.1f plain %.1f | pinned->pageable nt %.1f plain %.1f | pageable->pageable nt %.1f | ->4MiB ring plain %.1f | ->32MiB ring plain %.1f\n",huge,t,G/x/1e6,G/y/1e6,G/z/1e6,G/w/1e6,G/v/1e6,G/u/1e6,G/s/1e6);
      }
    }
    cudaFreeHost(p); free(q); free(h);
  }
  return 0;
}
