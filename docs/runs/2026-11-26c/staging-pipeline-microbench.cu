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
static bool BAR=false;
struct Pipe { int S; size_t B; bool nt; int T; std::vector<char*> slot; std::vector<cudaEvent_t> ev; cudaStream_t st;
  Pipe(int S,size_t B,bool nt,int T):S(S),B(B),nt(nt),T(T){ slot.resize(S); ev.resize(S); for(int i=0;i<S;i++){CK(cudaHostAlloc((void**)&slot[i],B,0)); memset(slot[i],0,B); CK(cudaEventCreateWithFlags(&ev[i],cudaEventDisableTiming));} CK(cudaStreamCreateWithFlags(&st,cudaStreamNonBlocking)); }
  ~Pipe(){ for(int i=0;i<S;i++){cudaFreeHost(slot[i]); cudaEventDestroy(ev[i]);} cudaStreamDestroy(st);}
  double up(const char* src, char* dev, size_t n){
    size_t P=(n+B-1)/B; std::vector<std::atomic<int>> done(P); std::vector<std::atomic<int>> queued(P); for(size_t k=0;k<P;k++){done[k]=0;queued[k]=0;}
    auto a=clk::now(); std::vector<std::thread> th;
    for(int t=0;t<T;t++) th.emplace_back([&,t]{ for(size_t k=0;k<P;k++){ int s=k%S; size_t len=std::min(B,n-k*B); if(k>=(size_t)S){ while(!queued[k-S].load(std::memory_order_acquire)) _mm_pause(); spin(ev[s]); }
        size_t per=(len/T+4095)/4096*4096; size_t o=t*per; if(o<len){ size_t l=std::min(per,len-o); cp(nt,src+k*B+o,slot[s]+o,l);} 
        if(done[k].fetch_add(1,std::memory_order_acq_rel)==T-1){ CK(cudaMemcpyAsync(dev+k*B,slot[s],len,cudaMemcpyHostToDevice,st)); CK(cudaEventRecord(ev[s],st)); queued[k].store(1,std::memory_order_release);}
        if(BAR) while(!queued[k].load(std::memory_order_acquire)) _mm_pause(); } });
    for(auto&x:th)x.join(); CK(cudaStreamSynchronize(st)); return ms(a,clk::now()); }
  double down(const char* dev, char* dst, size_t n){
    size_t P=(n+B-1)/B; std::vector<std::atomic<int>> done(P); std::vector<std::atomic<int>> queued(P); for(size_t k=0;k<P;k++){done[k]=0;queued[k]=0;}
    auto a=clk::now();
    auto q=[&](size_t k){ int s=k%S; size_t len=std::min(B,n-k*B); CK(cudaMemcpyAsync(slot[s],dev+k*B,len,cudaMemcpyDeviceToHost,st)); CK(cudaEventRecord(ev[s],st)); queued[k].store(1,std::memory_order_release); };
    for(size_t k=0;k<(size_t)S && k<P;k++) q(k);
    std::vector<std::thread> th;
    for(int t=0;t<T;t++) th.emplace_back([&,t]{ for(size_t k=0;k<P;k++){ int s=k%S; size_t len=std::min(B,n-k*B); while(!queued[k].load(std::memory_order_acquire)) _mm_pause(); spin(ev[s]);
        size_t per=(len/T+4095)/4096*4096; size_t o=t*per; if(o<len){ size_t l=std::min(per,len-o); cp(nt,slot[s]+o,dst+k*B+o,l);} 
        if(done[k].fetch_add(1,std::memory_order_acq_rel)==T-1 && k+S<P) q(k+S);
        if(BAR) while(done[k].load(std::memory_order_acquire)<T) _mm_pause(); } });
    for(auto&x:th)x.join(); CK(cudaStreamSynchronize(st)); return ms(a,clk::now()); }
};
int main(){ setvbuf(stdout,NULL,_IONBF,0);
  CK(cudaFree(0));
  for (size_t n : {256ull<<20, 1ull<<30}) {
  char *dev; CK(cudaMalloc(&dev,n));
  char *h=(char*)aligned_alloc(1<<21,n); memset(h,3,n); char *o=(char*)aligned_alloc(1<<21,n); memset(o,0,n);
  { char*p; CK(cudaHostAlloc((void**)&p,n,0)); memset(p,1,n); cudaEvent_t a,b; cudaEventCreate(&a); cudaEventCreate(&b);
    for(int r=0;r<2;r++){ cudaEventRecord(a); cudaMemcpy(dev,p,n,cudaMemcpyHostToDevice); cudaEventRecord(b); cudaEventSynchronize(b); float u; cudaEventElapsedTime(&u,a,b);
    cudaEventRecord(a); cudaMemcpy(p,dev,n,cudaMemcpyDeviceToHost); cudaEventRecord(b); cudaEventSynchronize(b); float d; cudaEventElapsedTime(&d,a,b);
    printf("n=%zu MiB pinned H2D %.1f GB/s D2H %.1f GB/s\n", n>>20, n/u/1e6, n/d/1e6);} cudaFreeHost(p); }
  struct C{int S; size_t B; bool nt; int T;};
  std::vector<C> cs={{4,16<<20,true,15},{4,16<<20,false,15},{8,8<<20,true,15},{8,8<<20,false,15},{16,4<<20,false,15},{16,4<<20,true,15}};
  for(int bar=0;bar<2;bar++) for(auto c:cs){ BAR=bar; Pipe p(c.S,c.B,c.nt,c.T); double bu=1e9,bd=1e9; for(int r=0;r<4;r++){ bu=std::min(bu,p.up(h,dev,n)); bd=std::min(bd,p.down(dev,o,n)); }
    if (memcmp(h,o,n)) printf("MISMATCH\n");
    printf("%s n=%zu MiB S=%d B=%zuMiB %s T=%d: up %.1f GB/s down %.1f GB/s\n", BAR?"barrier":"free", n>>20, c.S, c.B>>20, c.nt?"nt":"plain", c.T, n/bu/1e6, n/bd/1e6); }
  cudaFree(dev); free(h); free(o); }
}
