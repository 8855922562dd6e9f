/* Lazy loading of a group of shared libraries for the mjpeg executable (make_lazy_stubs.sh). */
#ifndef MJPEG_APP_LAZY_LOAD_H
#define MJPEG_APP_LAZY_LOAD_H

#include <pthread.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One group: its libraries by SONAME, the functions the executable calls in them and their
   slots (the generated stubs jump through slots[i] to names[i]). */
struct mjpeg_lazy_group {
  const char* what; /* "FFmpeg's libraries", for the error */
  const char* const* libraries;
  size_t library_count;
  const char* const* names;
  size_t name_count;
  void** slots;
  pthread_mutex_t lock;
  int loaded;
};
#define MJPEG_LAZY_GROUP_INIT PTHREAD_MUTEX_INITIALIZER, 0

/* Loads the group's libraries and fills every slot, once (the first call into the group from
   any thread; the others wait for it). A library or function that cannot be found ends the
   process with exit status 1 and one line on stderr: the executable was built against them. */
void mjpeg_lazy_load(struct mjpeg_lazy_group* group);

#ifdef __cplusplus
}
#endif

#endif
