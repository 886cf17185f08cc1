/* envcheck simulated cluster: a stand-in libnvidia-ml.so.1 (no GPU or driver exists here).
 * Implements the NVML entry points the probe and nvidia-ml-py's common calls use, with values
 * read from a config file (ENVCHECK_SIM_NVML, default /usr/local/share/envcheck-sim/nvml.conf):
 *   driver=535.104.05
 *   cuda=12020                  (nvmlSystemGetCudaDriverVersion: major*1000 + minor*10)
 *   fail=9                      (optional: every call returns this NVML error, e.g. 9 = DRIVER_NOT_LOADED)
 *   gpu=NAME|MEMORY_MIB|MAJOR.MINOR|UUID|PCI_BUS_ID   (one line per GPU)
 * Return codes and struct layouts follow nvml.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXGPU 64
typedef int nvmlReturn_t;
enum { OK = 0, UNINIT = 1, INVALID = 2, INSUFFICIENT_SIZE = 7, NOT_FOUND = 6, NOT_SUPPORTED = 3 };
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
typedef struct { char busIdLegacy[16]; unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
                 char busId[32]; } nvmlPciInfo_t;
struct gpu { char name[96]; unsigned long long mib; int major, minor; char uuid[96]; char bus[32]; };
typedef struct gpu *nvmlDevice_t;

static struct gpu gpus[MAXGPU];
static int ngpu = 0, inited = 0, fail = 0, cuda = 0;
static char driver[80] = "";

static void load(void) {
    const char *path = getenv("ENVCHECK_SIM_NVML");
    FILE *f = fopen(path ? path : "/usr/local/share/envcheck-sim/nvml.conf", "r");
    char line[512];
    ngpu = 0;
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!strncmp(line, "driver=", 7)) snprintf(driver, sizeof driver, "%s", line + 7);
        else if (!strncmp(line, "cuda=", 5)) cuda = atoi(line + 5);
        else if (!strncmp(line, "fail=", 5)) fail = atoi(line + 5);
        else if (!strncmp(line, "gpu=", 4) && ngpu < MAXGPU) {
            struct gpu *g = &gpus[ngpu];
            char *fld[5] = {0}; int i = 0; char *s = line + 4, *tok;
            while (i < 5 && (tok = strsep(&s, "|"))) fld[i++] = tok;
            if (i < 4) continue;
            snprintf(g->name, sizeof g->name, "%s", fld[0]);
            g->mib = strtoull(fld[1], 0, 10);
            sscanf(fld[2], "%d.%d", &g->major, &g->minor);
            snprintf(g->uuid, sizeof g->uuid, "%s", fld[3]);
            snprintf(g->bus, sizeof g->bus, "%s", fld[4] ? fld[4] : "00000000:00:00.0");
            ngpu++;
        }
    }
    fclose(f);
}

static nvmlReturn_t copy(char *dst, unsigned int len, const char *src) {
    if (!dst) return INVALID;
    if (strlen(src) + 1 > len) return INSUFFICIENT_SIZE;
    strcpy(dst, src);
    return OK;
}
#define READY() do { if (fail) return fail; if (!inited) return UNINIT; } while (0)
#define DEV() do { READY(); if (!dev) return INVALID; } while (0)

nvmlReturn_t nvmlInit_v2(void) { load(); if (fail) return fail; inited = 1; return OK; }
nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }
nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void)flags; return nvmlInit_v2(); }
nvmlReturn_t nvmlShutdown(void) { if (!inited) return UNINIT; inited = 0; return OK; }

const char *nvmlErrorString(nvmlReturn_t r) {
    switch (r) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 6: return "Not Found";
    case 7: return "Insufficient Size";
    case 9: return "Driver Not Loaded";
    case 12: return "NVML Shared Library Not Found";
    case 18: return "RM has detected an NVML/RM version mismatch.";  /* NVML_ERROR_LIB_RM_VERSION_MISMATCH */
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len) { READY(); return copy(v, len, driver); }
/* answers before nvmlInit and without the kernel module, as the real library does (535.261.03,
   tests/fixtures/nvidia-userspace/): "<NVML major>.<driver version>" */
nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int len) {
    char buf[96]; load(); snprintf(buf, sizeof buf, "%d.%s", cuda / 1000, driver); return copy(v, len, buf);
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { READY(); if (!v) return INVALID; *v = cuda; return OK; }
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { return nvmlSystemGetCudaDriverVersion(v); }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { READY(); if (!n) return INVALID; *n = ngpu; return OK; }
nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { return nvmlDeviceGetCount_v2(n); }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) {
    READY(); if (!d || i >= (unsigned)ngpu) return INVALID; *d = &gpus[i]; return OK;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d) { return nvmlDeviceGetHandleByIndex_v2(i, d); }
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *n, unsigned int len) { DEV(); return copy(n, len, dev->name); }
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *u, unsigned int len) { DEV(); return copy(u, len, dev->uuid); }
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t dev, unsigned int *i) { DEV(); *i = (unsigned)(dev - gpus); return OK; }
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t dev, int *major, int *minor) {
    DEV(); if (!major || !minor) return INVALID; *major = dev->major; *minor = dev->minor; return OK;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *m) {
    DEV(); if (!m) return INVALID;
    m->total = dev->mib << 20; m->used = 4ULL << 20; m->free = m->total - m->used; return OK;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *m) {
    DEV(); if (!m) return INVALID;
    m->total = dev->mib << 20; m->reserved = 0; m->used = 4ULL << 20; m->free = m->total - m->used; return OK;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t *p) {
    DEV(); if (!p) return INVALID;
    memset(p, 0, sizeof *p); snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%s", dev->bus);
    snprintf(p->busId, sizeof p->busId, "%s", dev->bus); return OK;
}
