/* The loader behind the stubs of make_lazy_stubs.sh (see lazy_load.h). */
#include "lazy_load.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>

namespace {

[[noreturn]] void fail(const mjpeg_lazy_group* g, const char* what, const char* why) {
  std::fprintf(stderr, "mjpeg: error: cannot load %s (%s): %s\n", g->what, what,
               why != nullptr ? why : "unknown error");
  std::fflush(stderr);
  _exit(1);
}

}  // namespace

extern "C" void mjpeg_lazy_load(mjpeg_lazy_group* g) {
  pthread_mutex_lock(&g->lock);
  if (!__atomic_load_n(&g->loaded, __ATOMIC_ACQUIRE)) {
    void* handles[32];
    const size_t n = g->library_count;
    if (n > sizeof handles / sizeof *handles) fail(g, g->libraries[0], "too many libraries");
    for (size_t i = 0; i < n; ++i) {
      /* RTLD_LAZY: the libraries' own calls are bound as they are made, as at a normal start. */
      handles[i] = dlopen(g->libraries[i], RTLD_LAZY | RTLD_LOCAL);
      if (handles[i] == nullptr) fail(g, g->libraries[i], dlerror());
    }
    for (size_t s = 0; s < g->name_count; ++s) {
      void* f = nullptr;
      for (size_t i = 0; i < n && f == nullptr; ++i) f = dlsym(handles[i], g->names[s]);
      if (f == nullptr) fail(g, g->names[s], "the function is not in its libraries");
      __atomic_store_n(&g->slots[s], f, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&g->loaded, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g->lock);
}
