/* The one configure result libfabric's prov/efa/src/efa_io_defs.h asks for,
 * so tests/unit/test_gda_wqe.c can include that header alone as the reference
 * for bench/engine/efab_gda_wqe.h's layouts. */
#define HAVE_EFA_DATA_PATH_DIRECT 1
