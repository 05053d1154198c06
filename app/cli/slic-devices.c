/* supervox-cli slic: the GPUs of a streamed run: what they let a run use
 * (what cudaMemGetInfo reports free, or --device-memory-limit) for the
 * run plan, and their backends; --devices spreads the slabs over several
 * GPUs. */
#define G_LOG_DOMAIN "sv-cli"

#include "slic-devices.h"

#include "cli-common.h"

#include <stdlib.h>
#include <string.h>

#include "supervox/sv-error.h"
#include "sv-config.h"

#if SV_HAVE_CUDA && defined(SV_CLI_WITH_CUDA)
#include "cuda/sv-cuda.h"
#define SV_CLI_CUDA 1
#else
#define SV_CLI_CUDA 0
#endif

#if SV_CLI_CUDA
/* The device numbers --devices names ("all": every one), or the local
 * rank's under mpirun, or device 0. */
static GArray *
device_list (const SvCliSlicContext *ctx, GError **error)
{
  GArray *list = g_array_new (FALSE, FALSE, sizeof (int));
  const int count = sv_cuda_device_count ();

  if (count == 0)
    {
      g_array_free (list, TRUE);
      return sv_cuda_device_available (error), NULL;
    }
  if (ctx->devices != NULL && strcmp (ctx->devices, "all") == 0)
    for (int d = 0; d < count; d++)
      g_array_append_val (list, d);
  else if (ctx->devices != NULL)
    {
      g_auto (GStrv) items = g_strsplit (ctx->devices, ",", -1);

      for (guint i = 0; items[i] != NULL; i++)
        {
          char *end = NULL;
          long d = strtol (items[i], &end, 10);

          if (end == items[i] || *end != '\0' || d < 0 || d >= count)
            {
              g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_INVALID_PARAM,
                           "--devices must list GPUs from 0 to %d, or say all; got %s", count - 1,
                           ctx->devices);
              g_array_free (list, TRUE);
              return NULL;
            }
          g_array_append_val (list, (int){ (int)d });
        }
    }
  else
    {
      /* Under mpirun each rank drives the GPU of its local rank. */
      const char *local = g_getenv ("OMPI_COMM_WORLD_LOCAL_RANK");
      int d = ctx->ranks != NULL && local != NULL ? atoi (local) % count : 0;

      g_array_append_val (list, d);
    }
  return list;
}

/* What a device lets a run use: --device-memory-limit, or what it has free. */
static guint64
device_limit (const SvCliSlicContext *ctx)
{
  gsize free_bytes = 0;

  if (ctx->device_memory_limit > 0)
    return ctx->device_memory_limit;
  if (!sv_cuda_mem_get_info (&free_bytes, NULL, NULL))
    return 0;
  return free_bytes;
}
#endif

void
sv_cli_slic_measure_devices (const SvCliSlicContext *ctx, SvRunBudgets *budgets)
{
  budgets->n_devices = 0;
  budgets->device_bytes = 0;
  budgets->devices_listed = ctx->devices != NULL;
#if SV_CLI_CUDA
  {
    const SvBackendChoice *choice = &ctx->backend_choice;
    g_autoptr (GArray) list = NULL;

    /* Asking for the CPU touches no device. */
    if (choice->device == NULL || (!choice->is_auto && !choice->wants_device))
      return;
    list = device_list (ctx, NULL);
    /* A list that names no GPU of this machine still goes to the GPUs,
     * where opening them says what is wrong with it. */
    budgets->n_devices = list != NULL                ? list->len
                         : budgets->devices_listed ? (guint)sv_cuda_device_count ()
                                                   : 0;
    budgets->device_bytes = device_limit (ctx);
  }
#endif
}

gboolean
sv_cli_slic_open_devices (SvCliSlicContext *ctx, GError **error)
{
#if SV_CLI_CUDA
  g_autoptr (GArray) list = NULL;

  if (ctx->device_backends == NULL)
    {
      list = device_list (ctx, error);
      if (list == NULL)
        return FALSE;
      ctx->device_backends = g_new0 (SvBackend *, list->len);
      for (guint i = 0; i < list->len; i++)
        {
          ctx->device_backends[i]
              = sv_cuda_backend_new_on_device (g_array_index (list, int, i), error);
          if (ctx->device_backends[i] == NULL)
            {
              sv_cli_slic_context_close_devices (ctx);
              return FALSE;
            }
          ctx->n_device_backends = i + 1;
        }
    }
  /* Slabs stay on the devices, and the connectivity runs there, within
   * the same limit (0: what each has free). */
  for (guint i = 0; i < ctx->n_device_backends; i++)
    sv_cuda_backend_set_memory_limit (ctx->device_backends[i], ctx->device_memory_limit);
  return TRUE;
#else
  g_set_error (error, SV_ENGINE_ERROR, SV_ENGINE_ERROR_BACKEND,
               "no CUDA device: this build of %s has no CUDA backend", SV_CLI_PROGRAM);
  return FALSE;
#endif
}

void
sv_cli_slic_context_close_devices (SvCliSlicContext *ctx)
{
  for (guint i = 0; i < ctx->n_device_backends; i++)
    sv_backend_free (ctx->device_backends[i]);
  g_clear_pointer (&ctx->device_backends, g_free);
  ctx->n_device_backends = 0;
}
