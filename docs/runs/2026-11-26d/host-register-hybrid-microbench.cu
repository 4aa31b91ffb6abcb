// Round trip of n bytes of pageable memory to the GPU and back: the crew's staging (no barrier,
// plain up, nt down) for the first (1-r) of the bytes, a registering thread (cudaHostRegister
// per G-byte block, DMA straight from/to it, unregistered after its download) for the rest.
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
#define CK(x) do{cudaError_t e=(x); if(e){printf("ERR %s line %d: %s\n",#x,__LINE__,cudaGetErrorString(e)); exit(1);}}while(0)
static void ntcopy(const char*s,char*d,size_t n){ size_t i=0; for(;i+16<=n;i+=16) _mm_stream_si128((__m128i*)(d+i), _mm_loadu_si128((const __m128i*)(s+i))); memcpy(d+i,s+i,n-i); _mm_sfence(); }
static void cp(bool nt,const char*s,char*d,size_t n){ if(nt) ntcopy(s,d,n); else memcpy(d,s,n); }
static void spin(cudaEvent_t e){ while(cudaEventQuery(e)==cudaErrorNotReady) _mm_pause(); }
static const int S=16; static const size_t B=4<<20;
struct Pipe { std::vector<char*> slot; std::vector<cudaEvent_t> ev; cudaStream_t st; int T;
  Pipe(int T):T(T){ slot.resize(S); ev.resize(S); for(int i=0;i<S;i++){CK(cudaHostAlloc((void**)&slot[i],B,0)); memset(slot[i],0,B); CK(cudaEventCreateWithFlags(&ev[i],cudaEventDisableTiming));} CK(cudaStreamCreateWithFlags(&st,cudaStreamNonBlocking)); }
  void up(const char* src, char* dev, size_t n){ if(!n) return;
    size_t P=(n+B-1)/B; std::vector<std::atomic<int>> done(P); std::vector<std::atomic<int>> queued(P); for(size_t k=0;k<P;k++){done[k]=0;queued[k]=0;}
    std::vector<std::thread> th;
    for(int t=0;t<T;t++) th.emplace_back([&,t]{ for(size_t k=0;k<P;k++){ int s=k%S; size_t len=std::min(B,n-k*B); if(k>=(size_t)S){ while(!queued[k-S].load(std::memory_order_acquire)) _mm_pause(); spin(ev[s]); }
        size_t per=(len/T+4095)/4096*4096; size_t o=t*per; if(o<len){ size_t l=std::min(per,len-o); cp(false,src+k*B+o,slot[s]+o,l);}
        if(done[k].fetch_add(1,std::memory_order_acq_rel)==T-1){ CK(cudaMemcpyAsync(dev+k*B,slot[s],len,cudaMemcpyHostToDevice,st)); CK(cudaEventRecord(ev[s],st)); queued[k].store(1,std::memory_order_release);} } });
    for(auto&x:th)x.join(); }
  void down(const char* dev, char* dst, size_t n){ if(!n) return;
    size_t P=(n+B-1)/B; std::vector<std::atomic<int>> done(P); std::vector<std::atomic<int>> queued(P); for(size_t k=0;k<P;k++){done[k]=0;queued[k]=0;}
    auto q=[&](size_t k){ int s=k%S; size_t len=std::min(B,n-k*B); CK(cudaMemcpyAsync(slot[s],dev+k*B,len,cudaMemcpyDeviceToHost,st)); CK(cudaEventRecord(ev[s],st)); queued[k].store(1,std::memory_order_release); };
    for(size_t k=0;k<(size_t)S && k<P;k++) q(k);
    std::vector<std::thread> th;
    for(int t=0;t<T;t++) th.emplace_back([&,t]{ for(size_t k=0;k<P;k++){ int s=k%S; size_t len=std::min(B,n-k*B); while(!queued[k].load(std::memory_order_acquire)) _mm_pause(); spin(ev[s]);
        size_t per=(len/T+4095)/4096*4096; size_t o=t*per; if(o<len){ size_t l=std::min(per,len-o); cp(true,slot[s]+o,dst+k*B+o,l);}
        if(done[k].fetch_add(1,std::memory_order_acq_rel)==T-1 && k+S<P) q(k+S); } });
    for(auto&x:th)x.join(); CK(cudaStreamSynchronize(st)); }
};
int main(int argc, char** argv){ setvbuf(stdout,NULL,_IONBF,0);
  CK(cudaFree(0));
  size_t n = 1ull<<30;
  char *dev; CK(cudaMalloc(&dev,n));
  cudaStream_t rs; CK(cudaStreamCreateWithFlags(&rs,cudaStreamNonBlocking));
  for (int huge : {0, 1}) {
    char *h=(char*)aligned_alloc(1<<21,n); madvise(h,n,huge?MADV_HUGEPAGE:MADV_NOHUGEPAGE); memset(h,3,n);
    for (size_t G : {16ull<<20, 64ull<<20}) for (int T : {15, 14}) for (double r : {0.0, 0.25, 0.35, 0.45, 0.55}) {
      Pipe p(T);
      double best=1e9, bu=0, bd=0, bun=0;
      for (int rep=0; rep<3; rep++) {
        size_t s = (size_t)(n*(1-r))/G*G; size_t nb=(n-s+G-1)/G;
        std::vector<cudaEvent_t> ue(nb), de(nb); for(size_t i=0;i<nb;i++){cudaEventCreateWithFlags(&ue[i],cudaEventDisableTiming);cudaEventCreateWithFlags(&de[i],cudaEventDisableTiming);}
        auto a=clk::now();
        std::thread reg([&]{ for(size_t i=0;i<nb;i++){ size_t o=s+i*G, l=std::min(G,n-o); CK(cudaHostRegister(h+o,l,0)); CK(cudaMemcpyAsync(dev+o,h+o,l,cudaMemcpyHostToDevice,rs)); CK(cudaEventRecord(ue[i],rs)); } });
        p.up(h,dev,s); reg.join(); CK(cudaStreamSynchronize(p.st)); CK(cudaStreamSynchronize(rs));
        auto b=clk::now();
        // "the sort": nothing; download
        std::thread unreg([&]{ for(size_t i=0;i<nb;i++){ size_t o=s+i*G, l=std::min(G,n-o); CK(cudaMemcpyAsync(h+o,dev+o,l,cudaMemcpyDeviceToHost,rs)); CK(cudaEventRecord(de[i],rs)); }
            for(size_t i=0;i<nb;i++){ spin(de[i]); CK(cudaHostUnregister(h+s+i*G)); } });
        p.down(dev,h,s); auto c=clk::now(); unreg.join(); auto d=clk::now();
        double tot=ms(a,d); if(tot<best){best=tot; bu=ms(a,b); bd=ms(b,c); bun=ms(c,d);}
        for(size_t i=0;i<nb;i++){cudaEventDestroy(ue[i]);cudaEventDestroy(de[i]);}
      }
      printf("huge=%d G=%zuMiB T=%d registered %.2f: round trip %.2f ms (up %.2f, down %.2f, unregister tail %.2f) = %.1f GB/s each way\n",
        huge, G>>20, T, r, best, bu, bd, bun, 2*n/best/1e6);
    }
    free(h);
  }
  { char*p; CK(cudaHostAlloc((void**)&p,n,0)); memset(p,1,n); cudaEvent_t a,b; cudaEventCreate(&a); cudaEventCreate(&b);
    for(int r=0;r<2;r++){ cudaEventRecord(a); cudaMemcpy(dev,p,n,cudaMemcpyHostToDevice); cudaEventRecord(b); cudaEventSynchronize(b); float u; cudaEventElapsedTime(&u,a,b);
    cudaEventRecord(a); cudaMemcpy(p,dev,n,cudaMemcpyDeviceToHost); cudaEventRecord(b); cudaEventSynchronize(b); float d; cudaEventElapsedTime(&d,a,b);
    printf("pinned H2D %.2f ms D2H %.2f ms: bound %.2f ms\n", u, d, u+d);} }
  system("cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag");
}
