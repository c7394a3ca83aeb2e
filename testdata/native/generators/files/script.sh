#!/bin/sh
echo "hello ${NAME}"  
exit 0