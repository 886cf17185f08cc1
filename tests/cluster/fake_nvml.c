/* envcheck simulated cluster: a stand-in libnvidia-ml.so.1 (no GPU or driver exists here).
 * Implements the NVML entry points the probe and nvidia-ml-py's common calls use, with values
 * read from a config file (ENVCHECK_SIM_NVML, default /usr/local/share/envcheck-sim/nvml.conf):
 *   driver=535.104.05
 *   cuda=12020                  (nvmlSystemGetCudaDriverVersion: major*1000 + minor*10)
 *   fail=9                      (optional: every call returns this NVML error, e.g. 9 = DRIVER_NOT_LOADED)
 *   gpu=NAME|MEMORY_MIB|MAJOR.MINOR|UUID|PCI_BUS_ID   (one line per GPU)
 *   health=INDEX|key=value,...  (optional, per GPU; unset keys keep a healthy GPU's values)
 *     ecc_mode ecc_vol_unc ecc_agg_unc ecc_vol_cor remap_corr remap_unc remap_pending remap_fail
 *     pages_pending throttle (nvmlClocksEventReasons bits, 0x.. allowed) temp slowdown persist mig
 *     compute nvlinks (links the GPU has; 0 = no NVLink) nvlink_down (bitmask of links down)
 *     nvlink_version (what nvmlDeviceGetNvLinkVersion answers for a link up: the driver's raw
 *     number, e.g. 4 for NVLink 4 from older drivers or 6 = NVML_NVLINK_VERSION_4_0 from newer;
 *     0 = the call is missing, as in drivers before it existed)
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
struct health { long long ecc_mode, ecc_vol_unc, ecc_agg_unc, ecc_vol_cor, remap_corr, remap_unc, remap_pending,
                 remap_fail, pages_pending, throttle, temp, slowdown, persist, mig, compute,
                 nvlinks, nvlink_down, nvlink_version; };
struct gpu { char name[96]; unsigned long long mib; int major, minor; char uuid[96]; char bus[32];
             struct health h; };
/* an idle, healthy data-centre GPU */
static const struct health HEALTHY = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0x1, 35, 90, 1, 0, 0, 0, 0, 0};
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
            g->h = HEALTHY;
            ngpu++;
        } else if (!strncmp(line, "health=", 7)) {
            char *bar = strchr(line + 7, '|'), *s, *kv;
            int i = atoi(line + 7);
            if (!bar || i < 0 || i >= ngpu) continue;
            s = bar + 1;
            while ((kv = strsep(&s, ","))) {
                char *eq = strchr(kv, '=');
                long long v;
                if (!eq) continue;
                *eq = 0; v = strtoll(eq + 1, 0, 0);
#define SET(k) if (!strcmp(kv, #k)) gpus[i].h.k = v;
                SET(ecc_mode) SET(ecc_vol_unc) SET(ecc_agg_unc) SET(ecc_vol_cor) SET(remap_corr)
                SET(remap_unc) SET(remap_pending) SET(remap_fail) SET(pages_pending) SET(throttle)
                SET(temp) SET(slowdown) SET(persist) SET(mig) SET(compute) SET(nvlinks) SET(nvlink_down)
                SET(nvlink_version)
#undef SET
            }
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

/* health: ECC, row remapping, page retirement, throttling, temperature, modes */
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t dev, int *current, int *pending) {
    DEV(); if (!current || !pending) return INVALID; *current = *pending = (int)dev->h.ecc_mode; return OK;
}
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t dev, int type, int counter, unsigned long long *n) {
    DEV(); if (!n || type < 0 || type > 1 || counter < 0 || counter > 1) return INVALID;
    if (!dev->h.ecc_mode) return NOT_SUPPORTED;
    /* type 1 = uncorrected, 0 = corrected; counter 0 = volatile, 1 = aggregate */
    *n = type == 1 ? (counter == 0 ? dev->h.ecc_vol_unc : dev->h.ecc_agg_unc) : dev->h.ecc_vol_cor;
    return OK;
}
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t dev, unsigned int *corr, unsigned int *unc,
                                       unsigned int *pending, unsigned int *failure) {
    DEV(); if (!corr || !unc || !pending || !failure) return INVALID;
    if (dev->major < 8) return NOT_SUPPORTED;  /* row remapping is Ampere and later */
    *corr = dev->h.remap_corr; *unc = dev->h.remap_unc; *pending = dev->h.remap_pending; *failure = dev->h.remap_fail;
    return OK;
}
nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t dev, int *pending) {
    DEV(); if (!pending) return INVALID; *pending = (int)dev->h.pages_pending; return OK;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t dev, unsigned long long *r) {
    DEV(); if (!r) return INVALID; *r = (unsigned long long)dev->h.throttle; return OK;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t dev, unsigned long long *r) {
    return nvmlDeviceGetCurrentClocksThrottleReasons(dev, r);
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor, unsigned int *t) {
    DEV(); if (!t || sensor != 0) return INVALID; *t = (unsigned)dev->h.temp; return OK;
}
nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t dev, int kind, unsigned int *t) {
    DEV(); if (!t) return INVALID; if (kind != 1) return NOT_SUPPORTED; *t = (unsigned)dev->h.slowdown; return OK;
}
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t dev, int *mode) {
    DEV(); if (!mode) return INVALID; *mode = (int)dev->h.persist; return OK;
}
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int *current, unsigned int *pending) {
    DEV(); if (!current || !pending) return INVALID;
    if (dev->major < 8) return NOT_SUPPORTED;
    *current = *pending = (unsigned)dev->h.mig; return OK;
}
nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t dev, int *mode) {
    DEV(); if (!mode) return INVALID; *mode = (int)dev->h.compute; return OK;
}
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t dev, unsigned int link, int *active) {
    DEV(); if (!active) return INVALID;
    if (!dev->h.nvlinks) return NOT_SUPPORTED;
    if (link >= (unsigned)dev->h.nvlinks) return INVALID;
    *active = !((dev->h.nvlink_down >> link) & 1); return OK;
}
/* as the driver does: an inactive link has no version to report */
nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t dev, unsigned int link, unsigned int *version) {
    DEV(); if (!version) return INVALID;
    if (!dev->h.nvlinks || !dev->h.nvlink_version) return NOT_SUPPORTED;
    if (link >= (unsigned)dev->h.nvlinks) return INVALID;
    if ((dev->h.nvlink_down >> link) & 1) return NOT_SUPPORTED;
    *version = (unsigned)dev->h.nvlink_version; return OK;
}
